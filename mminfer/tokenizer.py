"""MiniMind's tokenizer files (tokenizer.json + tokenizer_config.json) without transformers.

``tokenizers`` reads tokenizer.json; bos/eos/pad come from tokenizer_config.json; the chat prompt is
the config's own ``chat_template`` rendered with jinja2 in a sandbox, the way transformers'
``apply_chat_template`` renders it (trim_blocks, lstrip_blocks, a ``tojson`` filter and a
``raise_exception`` global). Without a template, plain ChatML turns are used.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from mminfer.errors import MminferError

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")

# Used only when tokenizer_config.json has no chat_template: plain ChatML turns.
CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def _token_text(entry) -> str | None:
    """tokenizer_config.json writes a special token either as a string or as {"content": ...}."""
    if isinstance(entry, dict):
        return entry.get("content")
    return entry


@dataclass
class Tokenizer:
    backend: object  # tokenizers.Tokenizer
    config: dict
    folder: Path

    @property
    def bos_token(self) -> str:
        return _token_text(self.config.get("bos_token")) or "<|im_start|>"

    @property
    def eos_token(self) -> str:
        return _token_text(self.config.get("eos_token")) or "<|im_end|>"

    @property
    def bos_token_id(self) -> int:
        return self._id_of(self.bos_token, "bos_token")

    @property
    def eos_token_id(self) -> int:
        return self._id_of(self.eos_token, "eos_token")

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    @property
    def id_count(self) -> int:
        """1 + the largest id the tokenizer can produce: the embedding rows it needs."""
        return max(self.backend.get_vocab(with_added_tokens=True).values(), default=-1) + 1

    def _id_of(self, token: str, key: str) -> int:
        token_id = self.backend.token_to_id(token)
        if token_id is None:
            raise MminferError(f"{self.folder}/tokenizer_config.json: {key} {token!r} is not in tokenizer.json.")
        return token_id

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special tokens written in the text become their ids, nothing is added."""
        return self.backend.encode(text, add_special_tokens=False).ids

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self.backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def chat_prompt(self, messages: list[dict], add_generation_prompt: bool = True, **extra) -> str:
        """The chat text the model was trained on, from the tokenizer's own template."""
        template = self.config.get("chat_template") or CHATML_TEMPLATE
        return render_chat_template(template, messages, add_generation_prompt=add_generation_prompt,
                                    bos_token=self.bos_token, eos_token=self.eos_token, **extra)


def _raise_exception(message):
    import jinja2

    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


@functools.lru_cache(maxsize=8)
def compile_chat_template(template: str):
    """The template compiled once, in the sandbox transformers uses for chat templates."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    return env.from_string(template)


def render_chat_template(template: str, messages: list[dict], add_generation_prompt: bool = True, **extra) -> str:
    import jinja2

    try:
        compiled = compile_chat_template(template)
        return compiled.render(messages=messages, add_generation_prompt=add_generation_prompt, **extra)
    except jinja2.exceptions.TemplateError as exc:
        raise MminferError(f"the tokenizer's chat_template could not be rendered: {exc}") from None


def load_tokenizer(folder: str | Path) -> Tokenizer:
    from tokenizers import Tokenizer as HFTokenizer

    folder = Path(folder)
    for name in TOKENIZER_FILES:
        if not (folder / name).is_file():
            raise MminferError(f"tokenizer folder {folder} has no {name}.")
    try:
        backend = HFTokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as exc:
        raise MminferError(f"{folder}/tokenizer.json could not be read by tokenizers ({exc}).") from None
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MminferError(f"{folder}/tokenizer_config.json is not valid JSON ({exc}).") from None
    tokenizer = Tokenizer(backend=backend, config=config, folder=folder)
    for key, token in (("bos_token", tokenizer.bos_token), ("eos_token", tokenizer.eos_token)):
        tokenizer._id_of(token, key)  # fail now, not mid-run, on an unknown special token
    return tokenizer


def input_name(model_set: str, key: str) -> str:
    """How the user set input ``key`` (pretrain, sft, tokenizer, val_data) of a model set: a config key
    in the workflow, a flag for a script run by hand."""
    if model_set == "custom":
        return f"--{key.replace('_', '-')}"
    if model_set in ("course", "demo"):
        return f"config key '{key}'"
    default = f" (default: '{key}')" if key in ("tokenizer", "val_data") else ""
    return f"config key 'models.{model_set}.{key}'{default}"


def check_vocab_fits(tokenizer: Tokenizer, embedding_rows: int, checkpoint, checkpoint_key: str,
                     model_set: str = "custom") -> None:
    """A tokenizer whose ids go past the checkpoint's embedding rows would end in an IndexError inside
    the model; say which inputs disagree instead. Fewer ids than rows is fine (MiniMind pads its
    vocabulary)."""
    ids = tokenizer.id_count
    if ids > embedding_rows:
        raise MminferError(
            f"the tokenizer ({input_name(model_set, 'tokenizer')}: {tokenizer.folder}) has {ids} token ids but "
            f"the checkpoint ({input_name(model_set, checkpoint_key)}: {checkpoint}) has an embedding of "
            f"{embedding_rows} rows, so ids {embedding_rows} to {ids - 1} have no embedding. Use the tokenizer "
            f"the checkpoint was trained with."
        )
