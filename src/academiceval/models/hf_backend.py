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
from academiceval.models.base import Completion, GenerationOptions
from academiceval.models.embedded import force_offline
from academiceval.models.tokenize import Tokenizer, chat_wrapper, from_hf
from academiceval.rounds.models import Sample
from academiceval.runs.errors import ContextLengthError

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
            self.hf_model = AutoModelForCausalLM.from_pretrained(
                self.model, local_files_only=True, dtype=_dtype(dtype)
            ).to(device)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load {self.model}: {exc}", source="--model") from exc
        self.hf_model.eval()
        self.chat_template = chat_template
        self._wrap = chat_wrapper(self.hf_tokenizer, chat_template) if use_chat_template else None
        self.tokenizer: Tokenizer = from_hf(
            self.hf_tokenizer, self.model, chat_template=chat_template, use_chat_template=use_chat_template
        )
        config = self.hf_model.config
        self.context_length: int | None = context_length or getattr(config, "max_position_embeddings", None)
        self._lock = threading.Lock()

    # -- protocol ---------------------------------------------------------------------------------------------

    def cache_identity(self) -> dict[str, Any]:
        template = self._wrap("\x00") if self._wrap else None
        return {
            "backend": "hf",
            "model": self.model,
            "revision": self._revision(),
            "dtype": self.dtype_name or str(self.hf_model.dtype),
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest() if template else None,
        }

    async def generate(self, prompt: str, options: GenerationOptions, sample: Sample | None = None) -> Completion:
        return await asyncio.to_thread(self._generate_sync, prompt, options)

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

    def _encode(self, prompt: str) -> Any:
        text = self.render(prompt)
        # a chat template writes BOS itself; a bare prompt gets the tokenizer's usual special tokens
        return self.hf_tokenizer(text, add_special_tokens=self._wrap is None, return_tensors="pt")

    def _generate_sync(self, prompt: str, options: GenerationOptions) -> Completion:
        import torch

        enc = self._encode(prompt)
        n_in = int(enc["input_ids"].shape[1])
        max_new = options.max_tokens or DEFAULT_MAX_NEW_TOKENS
        if self.context_length and n_in + max_new > self.context_length:
            raise ContextLengthError(
                f"prompt of {n_in} tokens + {max_new} output tokens exceeds the context length {self.context_length}",
                source=self.model,
                hint="pass --context-length so prompts are truncated to fit",
            )
        kwargs: dict[str, Any] = {"max_new_tokens": max_new}
        if options.temperature and options.temperature > 0:
            kwargs.update(do_sample=True, temperature=options.temperature)
            if options.top_p is not None:
                kwargs["top_p"] = options.top_p
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        pad = self.hf_tokenizer.pad_token_id
        if pad is None:
            pad = self.hf_tokenizer.eos_token_id
        enc = {k: v.to(self.device) for k, v in enc.items()}
        started = time.perf_counter()
        with self._lock, torch.inference_mode():
            if options.seed is not None:
                torch.manual_seed(options.seed)  # under the lock: no other generation shares the RNG meanwhile
            out = self.hf_model.generate(**enc, **kwargs, pad_token_id=pad)
        new = out[0, n_in:].tolist()
        eos = self.hf_tokenizer.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        stopped = bool(new) and new[-1] in eos_ids
        text = self.hf_tokenizer.decode(new, skip_special_tokens=True)
        return Completion(
            text=text,
            input_tokens=n_in,
            output_tokens=len(new),
            finish_reason="stop" if stopped or len(new) < max_new else "length",
            raw={"generate_s": round(time.perf_counter() - started, 4), "device": self.device},
        )
