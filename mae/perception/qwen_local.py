"""Icon captions from a Qwen2.5-VL (or Qwen2-VL) running in this process, on the GPU when there is one.

Same contract as ``ApiCaptioner``: the screen's new crops are tiled into one numbered sheet
(``caption_sheet``), captioned by one ``generate`` call with the same prompt, read back with
``parse_captions`` and cached by crop content (``CaptionCache``). A failure or an unusable reply leaves
the captions empty and returns a warning; no caption is ever invented.

Inputs are prepared by the checkpoint's own processor when it loads. transformers 5 cannot load the
Qwen-VL processor without torchvision (its video processor needs it), so then the tokenizer and the
PIL image processor prepare the single image themselves, exactly as the processor would.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PIL import Image

from mae.errors import ConfigError
from mae.perception.captions import CaptionCache, CaptionJob
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
TOKENS_PER_ICON = 40
"""Generation budget per new icon (a short description plus its JSON key and quotes)."""

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

    def __call__(self, prompt: str, image: Image.Image) -> Any:
        text = self.processor.apply_chat_template(
            _messages(prompt), add_generation_prompt=True, tokenize=False
        )
        return self.processor(text=[text], images=[image], return_tensors="pt")


class ImageOnlyInputs:
    """Inputs for one image without the full processor: the tokenizer's chat template, the image
    processor's patches, one ``<|image_pad|>`` per merged patch, and the modality ids the model reads."""

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

    def __call__(self, prompt: str, image: Image.Image) -> dict[str, Any]:
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                _messages(prompt), add_generation_prompt=True, tokenize=False
            )
        else:
            text = FALLBACK_CHAT.format(prompt=prompt)
        vision = self.image_processor(images=[image], return_tensors="pt")
        merge = int(getattr(self.image_processor, "merge_size", 2))
        count = int(vision["image_grid_thw"][0].prod()) // (merge * merge)
        if text.count(IMAGE_PAD) != 1:
            raise ValueError(
                f"the chat template produced {text.count(IMAGE_PAD)} image placeholders, expected 1"
            )
        encoded = self.tokenizer([text.replace(IMAGE_PAD, IMAGE_PAD * count)], return_tensors="pt")
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
    if processor is not None:
        inputs: ProcessorInputs | ImageOnlyInputs = ProcessorInputs(processor)
    else:
        with_types = "mm_token_type_ids" in inspect.signature(model.forward).parameters
        inputs = ImageOnlyInputs(tokenizer, image_processor, int(model.config.image_token_id), with_types)
    return LoadedModel(
        model=model, processor=processor, device=device, dtype=dtype, extras={"inputs": inputs}
    )


def _greedy(model: Any, max_new_tokens: int) -> Any:
    """The checkpoint's generation settings, made greedy (Qwen's ship sampling parameters)."""
    config = copy.deepcopy(model.generation_config)
    config.do_sample = False
    config.temperature, config.top_p, config.top_k = 1.0, 1.0, 50  # neutral values: no "unused flag" warning
    config.max_new_tokens = max_new_tokens
    return config


class LocalQwenCaptioner:
    """Captions icon crops with an in-process Qwen2.5-VL: one ``generate`` call per screen, cached."""

    def __init__(
        self,
        model_path_or_id: str,
        cache: CaptionCache,
        *,
        device: str | None = None,
        dtype: str | torch.dtype | None = None,
        max_new_tokens: int = 2048,
    ) -> None:
        require_torch("in-process Qwen2.5-VL captions")
        self.model_id = model_path_or_id
        self.cache = cache
        self.max_new_tokens = max_new_tokens
        source, local_only = weights_source(model_path_or_id)
        chosen_device = pick_device(device)
        chosen_dtype = pick_dtype(dtype, chosen_device, prefer_bf16=True)
        key = ("qwen-vl", source, chosen_device, str(chosen_dtype))
        self.loaded: LoadedModel = load_once(
            key, lambda: _load(source, local_only, chosen_device, chosen_dtype)
        )
        self.inputs: ProcessorInputs | ImageOnlyInputs = self.loaded.extras["inputs"]

    @property
    def device(self) -> str:
        return self.loaded.device

    def generate(self, prompt: str, image: Image.Image, max_new_tokens: int) -> str:
        """The model's greedy reply to ``prompt`` about ``image`` (special tokens removed)."""
        loaded = self.loaded
        with loaded.lock, inference(loaded.device):
            batch = self.inputs(prompt, image)
            moved = {
                name: value.to(loaded.device) if hasattr(value, "to") else value
                for name, value in batch.items()
            }
            moved["pixel_values"] = moved["pixel_values"].to(loaded.dtype)
            output = loaded.model.generate(**moved, generation_config=_greedy(loaded.model, max_new_tokens))
            new_tokens = output[:, moved["input_ids"].shape[1] :]
            text: str = self.inputs.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)[0]
        return text

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        """Captions in the order of ``icons`` ('' where unknown), and warnings."""
        job = CaptionJob(image, icons, self.cache)
        if not job.missing:
            return job.captions, []
        budget = min(self.max_new_tokens, 16 + TOKENS_PER_ICON * len(job.missing))
        try:
            reply = self.generate(job.prompt, job.sheet(), budget)
        except Exception as exc:  # a local model failure (out of memory, ...) must not end the run
            log.warning("local icon captioning failed", exc_info=True)
            self._release_gpu_memory()
            return job.captions, [
                f"icon captions unavailable: the local caption model failed ({type(exc).__name__}: {exc})"
            ]
        try:
            return job.finish(reply), []
        except ValueError as exc:
            return job.captions, [
                f"icon captions unavailable: the local caption model's reply was unusable ({exc})"
            ]

    def _release_gpu_memory(self) -> None:
        if self.loaded.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()


__all__ = ["FALLBACK_CHAT", "ImageOnlyInputs", "LocalQwenCaptioner", "ProcessorInputs"]
