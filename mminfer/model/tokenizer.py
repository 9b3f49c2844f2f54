"""MiniMind's tokenizer files without transformers.

Chat prompts are rendered from the tokenizer's own template as ``apply_chat_template`` does.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer as HFTokenizer

from mminfer.errors import MminferError

# Plain ChatML turns: only when tokenizer_config.json has none and config allows it.
CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# The files of a tokenizer folder, as MiniMind's model/ holds them.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")

# How an answer shows an id the tokenizer has no token for (Tokenizer.decode).
PAST_END_MARK = "⟨id {id}⟩"


@dataclass
class Tokenizer:
    backend: HFTokenizer
    config: dict  # tokenizer_config.json
    folder: Path
    bos_token: str
    eos_token: str
    bos_token_id: int
    eos_token_id: int

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    @functools.cached_property
    def id_count(self) -> int:
        """1 + the largest id the tokenizer can produce: the embedding rows it needs."""
        return max(self.backend.get_vocab(with_added_tokens=True).values(), default=-1) + 1

    def past_end(self, ids) -> int:
        """How many of ``ids`` are at or past the tokenizer's end (:attr:`id_count`).

        An embedding may have more rows than the tokenizer has ids (MiniMind pads its vocabulary),
        and a model can generate from those rows; no text stands for such an id.
        """
        return sum(1 for token_id in ids if int(token_id) >= self.id_count)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: special tokens written in it become their ids, nothing added."""
        return self.backend.encode(text, add_special_tokens=False).ids

    def decode(self, ids, skip_special_tokens: bool = True, mark_past_end: bool = True) -> str:
        """The text of ``ids``. An id at or past the tokenizer's end, which the tokenizers library
        drops without a word, shows as PAST_END_MARK ("⟨id 6123⟩"); ``mark_past_end=False``
        drops it as the library does (what MiniMind's eval_llm.py feeds back into a chat)."""
        if not mark_past_end:
            inside = [token_id for token_id in map(int, ids) if token_id < self.id_count]
            return self.backend.decode(inside, skip_special_tokens=skip_special_tokens)
        text = []
        run = []
        for token_id in map(int, ids):
            if token_id < self.id_count:
                run.append(token_id)
                continue
            text.append(self.backend.decode(run, skip_special_tokens=skip_special_tokens))
            text.append(PAST_END_MARK.format(id=token_id))
            run = []
        text.append(self.backend.decode(run, skip_special_tokens=skip_special_tokens))
        return "".join(text)

    def chat_template(self, chatml_fallback: bool = False) -> tuple[str, str]:
        """(the chat template, where it came from).

        Tokenizer_config.json's own, or plain ChatML turns when it has none and ``chatml_fallback``
        allows them; else a clear error.
        """
        template = self.config.get("chat_template")
        if template:
            return template, "tokenizer_config.json"
        if chatml_fallback:
            return CHATML_TEMPLATE, "plain ChatML (config key temp.chatml_fallback)"
        raise MminferError(
            f"{self.folder / 'tokenizer_config.json'} has no chat_template, so the format the SFT "
            "model was trained on is unknown. Use the tokenizer the model was trained with, or "
            "set config key 'temp.chatml_fallback' to true to prompt it with plain ChatML turns."
        )

    def chat_prompt(
        self,
        messages: list[dict],
        add_generation_prompt: bool = True,
        template: str | None = None,
        **extra,
    ) -> str:
        """The chat text of ``messages``, as transformers' apply_chat_template renders it.

        ``template`` defaults to the tokenizer's own.
        """
        if template is None:
            template, _ = self.chat_template()
        return render_chat_template(
            template,
            messages,
            add_generation_prompt=add_generation_prompt,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
            **extra,
        )


@functools.lru_cache(maxsize=8)
def compile_chat_template(template: str):
    """The template compiled once, sandboxed, with the extras transformers gives templates."""

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = functools.partial(json.dumps, ensure_ascii=False)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template)


def render_chat_template(
    template: str, messages: list[dict], add_generation_prompt: bool = True, **extra
) -> str:
    try:
        compiled = compile_chat_template(template)
        return compiled.render(
            messages=messages, add_generation_prompt=add_generation_prompt, **extra
        )
    except TemplateError as exc:
        raise MminferError(f"the tokenizer's chat_template could not be rendered: {exc}") from None


def load_tokenizer(folder: str | Path) -> Tokenizer:
    """Read a tokenizer folder; an unknown bos/eos token fails here, not mid-run."""
    folder = Path(folder)
    for name in TOKENIZER_FILES:
        if not (folder / name).is_file():
            raise MminferError(f"tokenizer folder {folder} has no {name}.")
    try:
        backend = HFTokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as exc:
        raise MminferError(
            f"{folder}/tokenizer.json could not be read by tokenizers ({exc})."
        ) from None
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MminferError(f"{folder}/tokenizer_config.json is not valid JSON ({exc}).") from None
    special = {}
    for key, default in (("bos_token", "<|im_start|>"), ("eos_token", "<|im_end|>")):
        entry = config.get(key)  # a string or {"content": ...}
        token = (entry.get("content") if isinstance(entry, dict) else entry) or default
        token_id = backend.token_to_id(token)
        if token_id is None:
            raise MminferError(
                f"{folder}/tokenizer_config.json: {key} {token!r} is not in tokenizer.json."
            )
        special[key], special[f"{key}_id"] = token, token_id
    return Tokenizer(backend=backend, config=config, folder=folder, **special)


def check_vocab_fits(
    tokenizer: Tokenizer, embedding_rows: int, tokenizer_source: str, checkpoint_source: str
) -> None:
    """Name the inputs that disagree when the tokenizer's ids go past the embedding's rows.

    Fewer ids is fine: MiniMind pads its vocabulary. The sources say where each was set, e.g.
    "config key 'tokenizer': /opt/minimind/model".
    """
    ids = tokenizer.id_count
    if ids > embedding_rows:
        raise MminferError(
            f"the tokenizer ({tokenizer_source}) has {ids} token ids but the checkpoint "
            f"({checkpoint_source}) has an embedding of {embedding_rows} rows, so ids "
            f"{embedding_rows} to {ids - 1} have no embedding. Use the tokenizer the checkpoint "
            "was trained with."
        )


def check_greedy_answer_fits(
    ids: list[int], tokenizer: Tokenizer, embedding_rows: int, tokenizer_source: str
) -> None:
    """Stop when a greedy answer holds an id at or past the tokenizer's end.

    A model trained with a tokenizer never saw the ids past its end, so its greedy choice never
    lands there (sampling still may, rarely: results count those). Greedy landing there means the
    tokenizer folder is not the model's. ``tokenizer_source`` says where it was set, e.g. "config
    key 'tokenizer': /opt/minimind/model".
    """
    past = tokenizer.past_end(ids)
    if past == 0:
        return
    first = next(token_id for token_id in ids if token_id >= tokenizer.id_count)
    raise MminferError(
        f"the greedy answer of step 1 holds {past} token id(s) at or past the end of the "
        f"tokenizer ({tokenizer_source}), the first {first}: the tokenizer has "
        f"{tokenizer.id_count} token ids, the checkpoint's embedding {embedding_rows} rows. A "
        "model trained with this tokenizer would never pick an id it never saw, so the folder is "
        "not the model's: use the tokenizer the checkpoint was trained with. Answers decoded "
        "with it would lose those ids."
    )
