"""The errors the workflow turns into a clear, one-paragraph message, and how a message names an
input (a config key, the demo's folder, or a flag of a script run by hand)."""


class MminferError(Exception):
    """Bad input or a failed check, explained for the user (no traceback needed)."""


def input_source(model_set: str, key: str, path) -> str:
    """Where the user set input ``key`` of a model set, for an error message.

    A config key, the demo's folder, or a flag of a script run by hand (model set "custom").
    """
    if model_set == "custom":
        return f"--{key.replace('_', '-')}: {path}"
    if model_set == "demo" and key != "sft_lora":
        return f"the demo's {key}, built under config key 'demo_dir': {path}"
    if model_set in ("course", "demo"):
        return f"config key '{key}': {path}"
    default = ""
    if key in ("tokenizer", "val_data"):
        default = f" (default: '{key}')"
    return f"config key 'models.{model_set}.{key}'{default}: {path}"
