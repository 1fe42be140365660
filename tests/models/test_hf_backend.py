"""The local HF backend for real: a tiny randomly initialised Llama with a tokenizer trained on corpus text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conftest import make_sample

pytest.importorskip("torch")
pytest.importorskip("transformers")

from academiceval.errors import ConfigError
from academiceval.models.base import Capabilities, GenerationOptions
from academiceval.models.errors import ContextLengthError
from academiceval.models.prepare import prepare_prompt
from academiceval.models.tokenize import load_tokenizer

pytestmark = pytest.mark.ml

CHAT = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
OTHER_CHAT = "{% for m in messages %}### {{ m['role'] }}: {{ m['content'] }}\n{% endfor %}### assistant:"
CONTEXT = 1024


def build_tiny_model(root: Path, texts: list[str]) -> Path:
    """Byte-level BPE trained on real paper text + a 2-layer Llama with random weights, saved like a checkpoint."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|end|>"]
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1200, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    raw.train_from_iterator(texts, trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    tok.chat_template = CHAT
    out = root / "tiny-llama"
    tok.save_pretrained(out)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=CONTEXT,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, papers) -> Path:
    texts = [t for p in list(papers.values())[:20] for _, t in p["sections"]]
    return build_tiny_model(tmp_path_factory.mktemp("hf"), texts)


@pytest.fixture(scope="module")
def backend(tiny):
    from academiceval.models.hf_backend import HFBackend

    return HFBackend(str(tiny))


def run(coro):
    return asyncio.run(coro)


def test_checkpoint_is_real(tiny):
    config = json.loads((tiny / "config.json").read_text())
    assert config["model_type"] == "llama" and config["max_position_embeddings"] == CONTEXT
    assert (tiny / "model.safetensors").is_file() and (tiny / "tokenizer.json").is_file()


def test_generation_is_greedy_and_deterministic(backend):
    opts = GenerationOptions(max_tokens=12)
    a = run(backend.generate("Write a title for a paper on adversarial text mutation.", opts))
    b = run(backend.generate("Write a title for a paper on adversarial text mutation.", opts))
    assert a.text == b.text and a.text.strip()
    assert 0 < a.output_tokens <= 12 and a.finish_reason in ("stop", "length")
    other = run(backend.generate("A completely different request about galaxies and dust grains.", opts))
    assert other.input_tokens != a.input_tokens


def test_sampling_follows_the_seed(backend):
    prompt = "Summarise the paper."

    def sample(seed):
        return run(backend.generate(prompt, GenerationOptions(temperature=1.0, max_tokens=16, seed=seed))).text

    assert sample(1) == sample(1)
    assert len({sample(s) for s in (1, 2, 3)}) > 1


def test_chat_template_is_applied_and_counted(backend, tiny):
    prompt = "Read the paper and write its abstract."
    text = backend.render(prompt)
    assert text.startswith("<s><|user|>\n" + prompt) and text.endswith("<|assistant|>\n")
    res = run(backend.generate(prompt, GenerationOptions(max_tokens=4)))
    assert res.input_tokens == len(backend.hf_tokenizer(text, add_special_tokens=False)["input_ids"])
    assert res.input_tokens == backend.tokenizer.count_prompt(prompt)  # the runner's budget counts what is sent
    assert backend.tokenizer.prompt_overhead > 0
    assert backend.context_length == CONTEXT
    # the same folder through load_tokenizer counts identically (openai-served copies of a local model)
    assert load_tokenizer(str(tiny)).count_prompt(prompt) == res.input_tokens


def test_chat_template_override_and_plain_prompts(tiny, backend):
    from academiceval.models.hf_backend import HFBackend

    custom = HFBackend(str(tiny), chat_template=OTHER_CHAT)
    assert custom.render("hi") == "### user: hi\n### assistant:"
    assert custom.cache_identity()["chat_template_sha256"] != backend.cache_identity()["chat_template_sha256"]
    plain = HFBackend(str(tiny), use_chat_template=False)
    assert plain.render("hi") == "hi" and plain.cache_identity()["chat_template_sha256"] is None
    res = run(plain.generate("hello there", GenerationOptions(max_tokens=3)))
    assert res.input_tokens == plain.tokenizer.count_prompt("hello there")
    ident = backend.cache_identity()
    assert ident["backend"] == "hf" and ident["model"] == str(tiny) and len(ident["revision"]) == 16


def test_truncation_with_the_models_own_tokenizer(backend, papers):
    sample = make_sample(papers["2212.11808"], "abstract", demos=[papers["2212.11772"]])
    out_tokens = 32
    with pytest.raises(ContextLengthError):  # the untruncated paper does not fit a 1K model
        run(
            backend.generate(
                prepare_prompt(
                    sample, tokenizer=backend.tokenizer, context_length=None, max_output_tokens=out_tokens
                ).prompt,
                GenerationOptions(max_tokens=32),
            )
        )
    prep = prepare_prompt(
        sample, tokenizer=backend.tokenizer, context_length=backend.context_length, max_output_tokens=out_tokens
    )
    assert prep.policy == "demos-dropped+body-tail-cut" and prep.tokens_cut > 5_000
    assert prep.input_tokens <= CONTEXT - out_tokens
    assert prep.tokenizer["kind"] == "hf"
    res = run(backend.generate(prep.prompt, GenerationOptions(max_tokens=out_tokens)))
    assert res.input_tokens == prep.input_tokens  # counted before = seen by the model
    assert res.input_tokens + res.output_tokens <= CONTEXT


def test_concurrent_calls_are_serialised_safely(backend):
    async def many():
        opts = GenerationOptions(max_tokens=5)
        return await asyncio.gather(*(backend.generate(f"prompt number {i}", opts) for i in range(3)))

    results = run(many())
    singles = [run(backend.generate(f"prompt number {i}", GenerationOptions(max_tokens=5))) for i in range(3)]
    assert [r.text for r in results] == [s.text for s in singles]


def test_registry_builds_the_backend(tiny):
    registry = pytest.importorskip("academiceval.models.registry")
    backend = registry.load_backend(f"hf/{tiny}")
    assert backend.name == "hf" and backend.context_length == CONTEXT
    # what the runner reads (no attribute probing): the window, no model listing, answers keyed by prompt only
    assert backend.capabilities == Capabilities(context_length=CONTEXT)
    assert registry.load_backend("baseline/lead").name == "baseline"
    with pytest.raises(ConfigError, match="unknown option 'devcie'"):  # a misspelled option is not dropped
        registry.load_backend(f"hf/{tiny}", devcie="cpu")


def test_bad_paths(tmp_path):
    from academiceval.models.hf_backend import HFBackend

    with pytest.raises(ConfigError):
        HFBackend(str(tmp_path / "nope"))
    with pytest.raises(ConfigError):
        HFBackend(str(tmp_path))  # a folder without a checkpoint


def test_micro_batching_matches_one_at_a_time(tiny, backend):
    from academiceval.models.hf_backend import HFBackend

    batched = HFBackend(str(tiny), max_batch=4)
    prompts = ["Write a title.", "A much longer request about the mutation of text for adversarial tests.", "Hi"]
    opts = GenerationOptions(max_tokens=6)

    async def together():
        return await asyncio.gather(*(batched.generate(p, opts) for p in prompts))

    results = run(together())
    assert [r.raw["batch_size"] for r in results] == [3, 3, 3]  # one left-padded batch
    singles = [run(backend.generate(p, opts)) for p in prompts]
    assert [r.text for r in results] == [s.text for s in singles]
    assert [r.input_tokens for r in results] == [s.input_tokens for s in singles]

    async def with_a_too_long_one():
        long_prompt = "word " * 2_000
        return await asyncio.gather(
            batched.generate(long_prompt, opts), batched.generate("Hi", opts), return_exceptions=True
        )

    too_long, ok = run(with_a_too_long_one())
    assert isinstance(too_long, ContextLengthError) and ok.text == singles[2].text
    with pytest.raises(ConfigError):
        HFBackend(str(tiny), max_batch=0)


def test_dtype_option(tiny):
    from academiceval.models.hf_backend import HFBackend

    assert HFBackend(str(tiny), dtype="float32").cache_identity()["dtype"] == "float32"
    with pytest.raises(ConfigError, match="unknown dtype"):
        HFBackend(str(tiny), dtype="int3")


def test_unavailable_device_is_a_config_error(tiny):
    from academiceval.models.hf_backend import HFBackend

    with pytest.raises(ConfigError, match="cannot load"):
        HFBackend(str(tiny), device="no-such-device")
