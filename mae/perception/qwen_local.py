"""Icon captions from a Qwen2.5-VL (or Qwen2-VL) running in this process, on the GPU when there is one.

Same contract as ``ApiCaptioner``: captions cached by crop content (``CaptionCache``), only new crops
asked, a failure or an unusable reply leaves the captions empty with a warning, no caption invented.
Each new icon is its own short sequence (``icon_tile`` + ``ICON_PROMPT``, the same length for every
icon), and a screen's new icons go through one batched ``generate``: the wall time follows the longest
caption, which is capped at ``CAPTION_TOKENS``, instead of one long sheet reply of 40 tokens per icon.

On a GPU, decoding uses a static key/value cache, which transformers compiles (``torch.compile``): the
batch is padded to ``batch_size`` sequences so every screen has the same shapes and one compiled graph
serves them all, and a warm-up at load pays the compile before the first screen.

Inputs are prepared by the checkpoint's own processor when it loads. transformers 5 cannot load the
Qwen-VL processor without torchvision (its video processor needs it), so then the tokenizer and the
PIL image processor prepare the single image themselves, exactly as the processor would.
"""

from __future__ import annotations

import copy
import inspect
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PIL import Image

from mae.errors import ConfigError
from mae.perception.captions import CAPTION_TOKENS, ICON_PROMPT, CaptionCache, CaptionJob, icon_tile
from mae.perception.elements import Element
from mae.perception.local_models import (
    LoadedModel,
    dtype_kwargs,
    inference,
    load_failed,
    load_once,
    pick_device,
    pick_dtype,
    require_torch,
    weights_source,
)

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

IMAGE_PAD = "<|image_pad|>"
BATCH_SIZE = 16
"""Icons per ``generate`` call; with the static cache every call is padded to exactly this many."""

FALLBACK_CHAT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    "<|vision_start|><|image_pad|><|vision_end|>{prompt}<|im_end|>\n<|im_start|>assistant\n"
)
"""Qwen-VL's chat format for one image and one text, used only when the tokenizer has no template."""

_MODEL_CLASSES = {
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration",
}


def _messages(prompt: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}]


class ProcessorInputs:
    """Inputs prepared by the checkpoint's processor (the normal path)."""

    kind = "processor"

    def __init__(self, processor: Any) -> None:
        self.processor = processor
        self.tokenizer = processor.tokenizer

    def __call__(self, prompts: Sequence[str], images: Sequence[Image.Image]) -> Any:
        texts = [
            self.processor.apply_chat_template(_messages(prompt), add_generation_prompt=True, tokenize=False)
            for prompt in prompts
        ]
        return self.processor(text=texts, images=list(images), padding=True, return_tensors="pt")


class ImageOnlyInputs:
    """Inputs for one image per prompt without the full processor: the tokenizer's chat template, the
    image processor's patches, one ``<|image_pad|>`` per merged patch, and the modality ids the model
    reads (prompts padded on the left, as the processor does for generation)."""

    kind = "image-only"

    def __init__(self, tokenizer: Any, image_processor: Any, image_token_id: int, with_types: bool) -> None:
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.image_token_id = image_token_id
        self.with_types = with_types
        found = tokenizer.convert_tokens_to_ids(IMAGE_PAD)
        if found != image_token_id:
            raise ConfigError(
                f"the tokenizer maps {IMAGE_PAD} to {found} but the model expects {image_token_id}; the "
                "tokenizer and the weights come from different checkpoints"
            )

    def _chat(self, prompt: str) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            text: str = self.tokenizer.apply_chat_template(
                _messages(prompt), add_generation_prompt=True, tokenize=False
            )
        else:
            text = FALLBACK_CHAT.format(prompt=prompt)
        if text.count(IMAGE_PAD) != 1:
            raise ValueError(
                f"the chat template produced {text.count(IMAGE_PAD)} image placeholders, expected 1"
            )
        return text

    def __call__(self, prompts: Sequence[str], images: Sequence[Image.Image]) -> dict[str, Any]:
        texts = [self._chat(prompt) for prompt in prompts]
        vision = self.image_processor(images=list(images), return_tensors="pt")
        merge = int(getattr(self.image_processor, "merge_size", 2))
        counts = [int(grid.prod()) // (merge * merge) for grid in vision["image_grid_thw"]]
        expanded = [
            text.replace(IMAGE_PAD, IMAGE_PAD * count) for text, count in zip(texts, counts, strict=True)
        ]
        encoded = self.tokenizer(expanded, padding=True, return_tensors="pt")
        inputs: dict[str, Any] = {**encoded, **vision}
        if self.with_types:
            inputs["mm_token_type_ids"] = (encoded["input_ids"] == self.image_token_id).long()
        return inputs


def _load(source: str, local_only: bool, device: str, dtype: torch.dtype) -> LoadedModel:
    import transformers
    from transformers import AutoConfig, AutoImageProcessor, AutoProcessor, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(source, local_files_only=local_only)
        class_name = _MODEL_CLASSES.get(config.model_type)
        if class_name is None:
            raise ConfigError(
                f"{source} is a {config.model_type!r} model; local captions need a Qwen2.5-VL or Qwen2-VL "
                "checkpoint such as Qwen/Qwen2.5-VL-3B-Instruct"
            )
        try:
            processor = AutoProcessor.from_pretrained(source, local_files_only=local_only)
        except ImportError as exc:  # transformers 5 without torchvision: the video processor cannot load
            log.info("Qwen-VL processor unavailable (%s); preparing image inputs without it", exc)
            processor = None
        if processor is not None and hasattr(processor, "image_processor"):
            tokenizer, image_processor = processor.tokenizer, processor.image_processor
        else:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
            image_processor = AutoImageProcessor.from_pretrained(source, local_files_only=local_only)
            processor = None
        model_class = getattr(transformers, class_name)
        model = model_class.from_pretrained(source, local_files_only=local_only, **dtype_kwargs(dtype))
    except (OSError, ValueError, ImportError, KeyError, TypeError) as exc:
        raise load_failed("the Qwen-VL caption model", source, exc) from exc
    model = model.to(device).eval()
    tokenizer.padding_side = "left"  # batched generation continues every prompt from its last token
    if processor is not None:
        inputs: ProcessorInputs | ImageOnlyInputs = ProcessorInputs(processor)
    else:
        with_types = "mm_token_type_ids" in inspect.signature(model.forward).parameters
        inputs = ImageOnlyInputs(tokenizer, image_processor, int(model.config.image_token_id), with_types)
    return LoadedModel(
        model=model, processor=processor, device=device, dtype=dtype, extras={"inputs": inputs}
    )


def _greedy(model: Any, max_new_tokens: int, *, static: bool, min_new_tokens: int = 0) -> Any:
    """The checkpoint's generation settings, made greedy (Qwen's ship sampling parameters); ``static``:
    a static key/value cache (compiled by transformers on a GPU)."""
    config = copy.deepcopy(model.generation_config)
    config.do_sample = False
    config.temperature, config.top_p, config.top_k = 1.0, 1.0, 50  # neutral values: no "unused flag" warning
    config.max_new_tokens = max_new_tokens
    config.min_new_tokens = min_new_tokens or None
    config.cache_implementation = "static" if static else None
    return config


class LocalQwenCaptioner:
    """Captions icon crops with an in-process Qwen2.5-VL: each new icon its own short sequence, one
    batched ``generate`` per screen (per ``batch_size`` icons), cached by crop content.

    ``max_new_tokens``: the caption cap, in tokens. ``static_cache``: decode with a static cache
    (default: on a GPU, where transformers compiles it); ``warm_up``: run one batch at load so the compile
    is paid then (default: when the cache is static).
    """

    def __init__(
        self,
        model_path_or_id: str,
        cache: CaptionCache,
        *,
        device: str | None = None,
        dtype: str | torch.dtype | None = None,
        max_new_tokens: int = CAPTION_TOKENS,
        batch_size: int = BATCH_SIZE,
        static_cache: bool | None = None,
        warm_up: bool | None = None,
    ) -> None:
        require_torch("in-process Qwen2.5-VL captions")
        if max_new_tokens < 1 or batch_size < 1:
            raise ConfigError("the caption cap and the batch size are at least 1")
        self.model_id = model_path_or_id
        self.cache = cache
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        source, local_only = weights_source(model_path_or_id)
        chosen_device = pick_device(device)
        chosen_dtype = pick_dtype(dtype, chosen_device, prefer_bf16=True)
        key = ("qwen-vl", source, chosen_device, str(chosen_dtype))
        self.loaded: LoadedModel = load_once(
            key, lambda: _load(source, local_only, chosen_device, chosen_dtype)
        )
        self.inputs: ProcessorInputs | ImageOnlyInputs = self.loaded.extras["inputs"]
        self.static_cache = chosen_device.startswith("cuda") if static_cache is None else static_cache
        if self.static_cache if warm_up is None else warm_up:
            self.warm_up()

    @property
    def device(self) -> str:
        return self.loaded.device

    def warm_up(self) -> float:
        """Caption one full batch of blank icons (compiling the static cache's decoding once per model and
        shape); the seconds it took, 0 when this model was already warmed for this shape."""
        shape = f"warm:{self.batch_size}:{self.max_new_tokens}:{self.static_cache}"
        if self.loaded.extras.get(shape):
            return 0.0
        started = time.perf_counter()
        blank = icon_tile(Image.new("RGB", (48, 48), "white"))
        self.generate_batch([ICON_PROMPT] * self.batch_size, [blank] * self.batch_size, self.max_new_tokens)
        self.loaded.extras[shape] = True
        return time.perf_counter() - started

    def generate_batch(
        self,
        prompts: Sequence[str],
        images: Sequence[Image.Image],
        max_new_tokens: int,
        *,
        min_new_tokens: int = 0,
    ) -> list[str]:
        """The model's greedy replies, one per (prompt, image) pair, in one ``generate`` call (special
        tokens removed). ``min_new_tokens`` forces that many tokens (timing a random model)."""
        loaded = self.loaded
        with loaded.lock, inference(loaded.device):
            batch = self.inputs(prompts, images)
            moved = {
                name: value.to(loaded.device) if hasattr(value, "to") else value
                for name, value in batch.items()
            }
            moved["pixel_values"] = moved["pixel_values"].to(loaded.dtype)
            config = _greedy(
                loaded.model, max_new_tokens, static=self.static_cache, min_new_tokens=min_new_tokens
            )
            output = loaded.model.generate(**moved, generation_config=config)
            new_tokens = output[:, moved["input_ids"].shape[1] :]
            texts: list[str] = self.inputs.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        return texts

    def generate(self, prompt: str, image: Image.Image, max_new_tokens: int) -> str:
        """The model's greedy reply to ``prompt`` about ``image`` (special tokens removed)."""
        return self.generate_batch([prompt], [image], max_new_tokens)[0]

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        """Captions in the order of ``icons`` ('' where unknown), and warnings."""
        job = CaptionJob(image, icons, self.cache)
        if not job.missing:
            return job.captions, []
        tiles = job.tiles()
        replies: list[str] = []
        try:
            for start in range(0, len(tiles), self.batch_size):
                chunk = tiles[start : start + self.batch_size]
                # a static cache keeps one shape: the last chunk is padded by repeating its last icon
                padded = chunk + [chunk[-1]] * (self.batch_size - len(chunk)) if self.static_cache else chunk
                answers = self.generate_batch([ICON_PROMPT] * len(padded), padded, self.max_new_tokens)
                replies.extend(answers[: len(chunk)])
        except Exception as exc:  # a local model failure (out of memory, ...) must not end the run
            log.warning("local icon captioning failed", exc_info=True)
            self._release_gpu_memory()
            return job.captions, [
                f"icon captions unavailable: the local caption model failed ({type(exc).__name__}: {exc})"
            ]
        return job.finish_each(replies)

    def _release_gpu_memory(self) -> None:
        if self.loaded.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()


__all__ = ["BATCH_SIZE", "FALLBACK_CHAT", "ImageOnlyInputs", "LocalQwenCaptioner", "ProcessorInputs"]
