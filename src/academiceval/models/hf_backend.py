"""A local Hugging Face causal LM as a backend (`hf/<path>`), loaded from local files only.

Generation runs in a worker thread (`asyncio.to_thread`) behind a lock: one forward pass at a time is what a
CPU or a single GPU can do anyway, and it keeps the event loop free for the runner's bookkeeping. The backend
exposes its own tokenizer (with the chat template it applies) and its context length, so the runner budgets
prompts in exactly the tokens this model will see.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from academiceval.errors import ConfigError
from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.embedded import force_offline
from academiceval.models.errors import ContextLengthError
from academiceval.models.tokenize import Tokenizer, chat_wrapper, from_hf
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample

DEFAULT_MAX_NEW_TOKENS = 256


def _dtype(name: str | None) -> Any:
    import torch

    if name in (None, "", "auto"):
        return None
    table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16, "fp16": torch.float16}
    table.update({"bfloat16": torch.bfloat16, "bf16": torch.bfloat16})
    if name not in table:
        raise ConfigError(f"unknown dtype {name!r}", source="hf backend", hint="float32, float16 or bfloat16")
    return table[name]


class HFBackend:
    """Backend protocol implementation over transformers' AutoModelForCausalLM + AutoTokenizer."""

    name = "hf"

    def __init__(
        self,
        model: str,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        chat_template: str | None = None,
        use_chat_template: bool = True,
        context_length: int | None = None,
        max_batch: int = 1,
    ) -> None:
        force_offline()
        path = Path(model).expanduser()
        if not path.is_dir():
            raise ConfigError(
                f"hf model {model!r} is not a local directory",
                source="--model",
                hint="download the checkpoint first (e.g. huggingface-cli download) and pass its folder",
            )
        try:
            import torch  # noqa: F401
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ConfigError("transformers/torch are not installed", hint="pip install 'academiceval[ml]'") from exc
        self.model = str(path)
        self.device = device
        self.dtype_name = dtype
        try:
            self.hf_tokenizer = AutoTokenizer.from_pretrained(self.model, local_files_only=True)
            torch_dtype = _dtype(dtype)
            extra = {} if torch_dtype is None else {"dtype": torch_dtype}  # transformers < 4.56: torch_dtype
            try:
                model_obj = AutoModelForCausalLM.from_pretrained(self.model, local_files_only=True, **extra)
            except TypeError:
                extra = {"torch_dtype": torch_dtype}
                model_obj = AutoModelForCausalLM.from_pretrained(self.model, local_files_only=True, **extra)
            self.hf_model = model_obj.to(device)
        except ConfigError:
            raise
        except Exception as exc:  # missing files, unknown architecture, unavailable device: all fixable by the user
            raise ConfigError(
                f"cannot load {self.model}: {type(exc).__name__}: {exc}",
                source="--model",
                hint="check the folder holds a causal LM checkpoint and that the device exists",
            ) from exc
        self.hf_model.eval()
        self.chat_template = chat_template
        self._wrap = chat_wrapper(self.hf_tokenizer, chat_template) if use_chat_template else None
        self.tokenizer: Tokenizer = from_hf(
            self.hf_tokenizer, self.model, chat_template=chat_template, use_chat_template=use_chat_template
        )
        config = self.hf_model.config
        self.context_length: int | None = context_length or getattr(config, "max_position_embeddings", None)
        self.capabilities = Capabilities(context_length=self.context_length)
        self._lock = threading.Lock()
        if max_batch < 1:
            raise ConfigError(f"max_batch must be at least 1, not {max_batch}", source="hf backend")
        self.max_batch = max_batch
        self._pending: list[tuple[str, GenerationOptions, asyncio.Future[Completion]]] = []
        self._worker: asyncio.Task[None] | None = None
        self._identity: dict[str, Any] | None = None

    # -- protocol ---------------------------------------------------------------------------------------------

    def cache_identity(self) -> dict[str, Any]:
        if self._identity is None:  # reads the checkpoint folder: computed once
            template = self._wrap("\x00") if self._wrap else None
            self._identity = {
                "backend": "hf",
                "model": self.model,
                "revision": self._revision(),
                "dtype": self.dtype_name or str(self.hf_model.dtype),
                "chat_template_sha256": sha256_hex(template) if template else None,
            }
        return dict(self._identity)

    async def generate(self, prompt: str, options: GenerationOptions, sample: Sample | None = None) -> Completion:
        if self.max_batch == 1:
            return await asyncio.to_thread(self._generate_batch_sync, [prompt], options, 1)
        # Micro-batching: requests that arrive while a batch runs are grouped (same options) into the next one.
        fut: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending.append((prompt, options, fut))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(0)  # let callers scheduled in the same tick enqueue first
            head = self._pending[0][1]
            batch = [item for item in self._pending if item[1] == head][: self.max_batch]
            for item in batch:
                self._pending.remove(item)
            live = [item for item in batch if not item[2].cancelled()]
            if not live:
                continue
            try:
                outs = await asyncio.to_thread(self._generate_batch_sync, [p for p, _, _ in live], head, len(live))
            except BaseException as exc:  # one failure fails its batch; every caller gets the error
                for _, _, fut in live:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for (_, _, fut), out in zip(live, outs, strict=True):
                if not fut.done():
                    if isinstance(out, BaseException):
                        fut.set_exception(out)
                    else:
                        fut.set_result(out)

    async def aclose(self) -> None:
        return None

    # -- work -------------------------------------------------------------------------------------------------

    def render(self, prompt: str) -> str:
        """The exact text fed to the model (the chat template applied when there is one)."""
        return self._wrap(prompt) if self._wrap else prompt

    def _revision(self) -> str:
        """A content hash of the config and weight file names/sizes: changes when the checkpoint does."""
        digest = hashlib.sha256()
        for f in sorted(Path(self.model).iterdir()):
            if f.is_file():
                digest.update(f"{f.name}:{f.stat().st_size}".encode())
                if f.suffix == ".json":
                    digest.update(f.read_bytes())
        return digest.hexdigest()[:16]

    def _generate_batch_sync(
        self, prompts: list[str], options: GenerationOptions, batch_size: int
    ) -> list[Completion] | Completion:
        """Generate for prompts with the same options (left-padded batch). A single prompt returns its Completion,
        raising on errors; a batch returns one entry per prompt, an exception object for a prompt that failed."""
        import torch

        single = batch_size == 1 and len(prompts) == 1
        max_new = options.max_tokens or DEFAULT_MAX_NEW_TOKENS
        results: list[Completion | BaseException | None] = [None] * len(prompts)
        texts: list[str] = []
        index: list[int] = []
        for i, prompt in enumerate(prompts):
            text = self.render(prompt)
            n_in = len(self.hf_tokenizer(text, add_special_tokens=self._wrap is None)["input_ids"])
            if self.context_length and n_in + max_new > self.context_length:
                err = ContextLengthError(
                    f"prompt of {n_in} tokens + {max_new} output tokens exceeds the context length "
                    f"{self.context_length}",
                    source=self.model,
                    hint="pass --context-length so prompts are truncated to fit",
                )
                if single:
                    raise err
                results[i] = err
                continue
            texts.append(text)
            index.append(i)
        if texts:
            for i, out in zip(index, self._run(texts, options, max_new, torch), strict=True):
                results[i] = out
        if single:
            assert isinstance(results[0], Completion)
            return results[0]
        return results

    def _run(self, texts: list[str], options: GenerationOptions, max_new: int, torch: Any) -> list[Completion]:
        tok = self.hf_tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        tok.padding_side = "left"  # decoder-only models continue from the right end
        enc = tok(texts, add_special_tokens=self._wrap is None, return_tensors="pt", padding=len(texts) > 1)
        enc = {k: v.to(self.device) for k, v in enc.items()}
        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": pad}
        if options.temperature and options.temperature > 0:
            kwargs.update(do_sample=True, temperature=options.temperature)
            if options.top_p is not None:
                kwargs["top_p"] = options.top_p
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        started = time.perf_counter()
        with self._lock, torch.inference_mode():
            if options.seed is not None:
                torch.manual_seed(options.seed)  # under the lock: no other generation shares the RNG meanwhile
            out = self.hf_model.generate(**enc, **kwargs)
        elapsed = round(time.perf_counter() - started, 4)
        width = int(enc["input_ids"].shape[1])
        eos = tok.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        completions = []
        for row in range(len(texts)):
            n_in = int(enc["attention_mask"][row].sum())
            new = out[row, width:].tolist()
            stop = next((j for j, t in enumerate(new) if t in eos_ids), None)
            new = new[: stop + 1] if stop is not None else new
            completions.append(
                Completion(
                    text=tok.decode(new, skip_special_tokens=True),
                    input_tokens=n_in,
                    output_tokens=len(new),
                    finish_reason="stop" if stop is not None or len(new) < max_new else "length",
                    raw={"generate_s": elapsed, "device": self.device, "batch_size": len(texts)},
                )
            )
        return completions
