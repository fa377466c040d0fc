"""Folding PP-OCR's elementwise layers into its convolutions before onnxruntime loads a model.

PP-OCRv4's backbones (PP-LCNetV3, PP-HGNet-style blocks) follow convolutions with a learnable scalar
affine (``x * s + b``), a hard-swish written as four elementwise operators (``x * clip(x + 3, 0, 6) /
6``) and often a second scalar affine. onnxruntime runs each as a pass over the feature map, and its
blocked-layout convolutions convert the map out of that layout and back around a scalar Add or Mul.
The rewrite is exact algebra (the outputs agree to float rounding, ~1e-6):

- convolution, then ``× s``, then ``+ b``: one convolution (weights × s, bias × s + b);
- the hard-swish: one ``HardSwish`` (ONNX opset 14; an older model is converted to that opset first),
  which onnxruntime fuses into the convolution before it;
- ``× s`` and ``+ b`` right before a 1×1 convolution without padding: folded into that convolution;
- any other ``× s`` and ``+ b`` on a feature map (before a padded depthwise convolution, whose zero
  border would change if the shift moved into it): one per-channel ``BatchNormalization``, which
  onnxruntime runs in the blocked layout;
- a squeeze-and-excitation gate with its shortcut, ``x + x · s`` with ``s`` one value per channel:
  ``x · (s + 1)``, one pass over the map instead of two (the detector's feature pyramid);
- a transposed convolution, then ``+ b`` per channel or a ``BatchNormalization``: one transposed
  convolution (the detector's head; onnxruntime fuses neither into it).

Measured with ``python benchmarks/perception.py --compare fold=0 fold=1``; see docs/perception.md.
Needs the ``onnx`` package; without it, or for a graph without these patterns, the model is loaded
as it is.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto


class _Graph:
    """A model's nodes with their constants and the nodes reading each value, kept up to date as
    rewrites replace nodes; ``save`` writes the result back into the model."""

    def __init__(self, model: ModelProto) -> None:
        from onnx import numpy_helper

        self.graph = model.graph
        self.new_consts: list[str] = []
        self.consts: dict[str, np.ndarray] = {
            i.name: numpy_helper.to_array(i) for i in self.graph.initializer
        }
        for node in self.graph.node:
            if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
                self.consts[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        self.outputs = {o.name for o in self.graph.output}
        self.maps = _feature_maps(model)
        self.nodes: list[NodeProto] = list(self.graph.node)
        self.names = {n.name for n in self.nodes}
        self.values = {
            *self.consts,
            *(v.name for v in [*self.graph.input, *self.graph.output]),
            *(name for n in self.nodes for name in [*n.input, *n.output]),
        }
        self.users: dict[str, list[NodeProto]] = defaultdict(list)
        for node in self.nodes:
            self._link(node)

    def _link(self, node: NodeProto) -> None:
        for name in node.input:
            self.users[name].append(node)

    def _unlink(self, node: NodeProto) -> None:
        for name in node.input:
            self.users[name] = [u for u in self.users[name] if u is not node]

    def scalar(self, name: str) -> float | None:
        """The value of a one-element constant that broadcasts without adding dimensions to a 4-D map."""
        value = self.consts.get(name)
        if value is None or value.size != 1 or value.ndim > 4:
            return None
        return float(value.reshape(-1)[0])

    def only_user(self, name: str, op_type: str) -> NodeProto | None:
        """The single node reading ``name`` when it is an ``op_type`` (and ``name`` is not an output)."""
        users = self.users.get(name, [])
        if len(users) != 1 or name in self.outputs or users[0].op_type != op_type:
            return None
        return users[0]

    def scalar_operand(self, node: NodeProto, data: str) -> float | None:
        """The scalar constant ``node`` combines with ``data`` (an Add or Mul of two inputs)."""
        if len(node.input) != 2 or data not in node.input:
            return None
        other = node.input[1] if node.input[0] == data else node.input[0]
        return self.scalar(other) if other != data else None

    def add_name(self, base: str) -> str:
        """A node name not used yet, from ``base``."""
        index = 0
        while f"{base}_folded{index}" in self.names:
            index += 1
        self.names.add(f"{base}_folded{index}")
        return f"{base}_folded{index}"

    def add_value(self, name: str) -> str:
        """A value name no node, constant or graph input or output uses yet, from ``name``."""
        unique = name
        while unique in self.values:
            unique += "_"
        self.values.add(unique)
        return unique

    def add_const(self, name: str, value: np.ndarray) -> str:
        """A new float32 constant named from ``name``, its name returned."""
        unique = self.add_value(name)
        self.consts[unique] = value.astype(np.float32)
        self.new_consts.append(unique)
        return unique

    def replace(self, old: list[NodeProto], new: list[NodeProto]) -> None:
        """Put ``new`` where the first of ``old`` was and drop the rest of ``old``."""
        at = min(next(i for i, n in enumerate(self.nodes) if n is o) for o in old)
        for node in old:
            self._unlink(node)
        kept = [n for n in self.nodes[:at] if all(n is not o for o in old)]
        rest = [n for n in self.nodes[at:] if all(n is not o for o in old)]
        self.nodes = [*kept, *new, *rest]
        for node in new:
            self._link(node)

    def save(self) -> None:
        """Write the rewritten nodes and the constants they use back into the model."""
        from onnx import numpy_helper

        used = {name for node in self.nodes for name in node.input}
        kept_inits = [i for i in self.graph.initializer if i.name in used]
        new_inits = [numpy_helper.from_array(self.consts[n], n) for n in self.new_consts if n in used]
        nodes = [n for n in self.nodes if not (n.op_type == "Constant" and n.output[0] not in used)]
        del self.graph.initializer[:]
        self.graph.initializer.extend([*kept_inits, *new_inits])
        del self.graph.node[:]
        self.graph.node.extend(nodes)


MapShape = tuple[int, int | None, int | None]
"""A feature map's (channels, height, width); a side shape inference cannot tell is ``None``."""


def _feature_maps(model: ModelProto) -> dict[str, MapShape]:
    """The shape of each float32 feature map (a 4-D value) whose channels shape inference can tell."""
    from onnx import TensorProto, shape_inference

    inferred = shape_inference.infer_shapes(model).graph
    maps: dict[str, MapShape] = {}
    for value in [*inferred.input, *inferred.value_info, *inferred.output]:
        tensor = value.type.tensor_type
        dims = tensor.shape.dim
        if tensor.elem_type == TensorProto.FLOAT and len(dims) == 4 and dims[1].HasField("dim_value"):
            height, width = (int(d.dim_value) if d.HasField("dim_value") else None for d in dims[2:])
            maps[value.name] = (int(dims[1].dim_value), height, width)
    return maps


def _conv_weights(g: _Graph, conv: NodeProto) -> tuple[np.ndarray, np.ndarray] | None:
    if len(conv.input) < 2 or conv.input[1] not in g.consts:
        return None
    weight = g.consts[conv.input[1]].astype(np.float32)
    if len(conv.input) > 2 and conv.input[2]:
        if conv.input[2] not in g.consts:
            return None
        bias = g.consts[conv.input[2]].astype(np.float32)
    else:
        bias = np.zeros(weight.shape[0], np.float32)
    return weight, bias


def _new_conv(
    g: _Graph, conv: NodeProto, weight: np.ndarray, bias: np.ndarray, source: str, out: str
) -> NodeProto:
    from onnx import helper

    node = helper.make_node(
        "Conv",
        [source, g.add_const(conv.input[1] + "_folded", weight), g.add_const(conv.output[0] + "_bias", bias)],
        [out],
        name=g.add_name(conv.name or "conv"),
    )
    node.attribute.extend(conv.attribute)
    return node


def _fold_affine_after_conv(g: _Graph) -> bool:
    """conv → × s (→ + b) becomes one conv."""
    for conv in g.nodes:
        if conv.op_type != "Conv" or (params := _conv_weights(g, conv)) is None:
            continue
        weight, bias = params
        chain: list[NodeProto] = [conv]
        scale, shift, out = 1.0, 0.0, conv.output[0]
        mul = g.only_user(out, "Mul")
        if mul is not None and (s := g.scalar_operand(mul, out)) is not None:
            chain.append(mul)
            scale, out = s, mul.output[0]
        add = g.only_user(out, "Add")
        if add is not None and (b := g.scalar_operand(add, out)) is not None:
            chain.append(add)
            shift, out = b, add.output[0]
        if len(chain) == 1:
            continue
        g.replace(chain, [_new_conv(g, conv, weight * scale, bias * scale + shift, conv.input[0], out)])
        return True
    return False


def _hard_swish(g: _Graph) -> bool:
    """x · clip(x + 3, 0, 6) / 6 becomes one HardSwish, which onnxruntime fuses into the convolution
    before it."""
    from onnx import helper

    for add in g.nodes:
        if add.op_type != "Add" or len(add.input) != 2:
            continue
        for x in add.input:
            if g.scalar_operand(add, x) != 3.0:
                continue
            clip = g.only_user(add.output[0], "Clip")
            if clip is None or len(clip.input) != 3:
                continue
            if g.scalar(clip.input[1]) != 0.0 or g.scalar(clip.input[2]) != 6.0:
                continue
            mul = g.only_user(clip.output[0], "Mul")
            if mul is None or x not in mul.input:
                continue
            div = g.only_user(mul.output[0], "Div")
            if div is None or div.input[0] != mul.output[0] or g.scalar(div.input[1]) != 6.0:
                continue
            g.replace([add, clip, mul, div], [helper.make_node("HardSwish", [x], [div.output[0]])])
            return True
    return False


def _scalar_affine(g: _Graph, first: NodeProto) -> tuple[str, float, float, list[NodeProto]] | None:
    """(input, scale, shift, nodes) when ``first`` is ``× s``, ``× s`` then ``+ b`` (the Add its only
    reader), or ``+ b``, with scalar constants ``s`` and ``b``."""
    if first.op_type not in ("Mul", "Add") or len(first.input) != 2:
        return None
    data = next((i for i in first.input if g.scalar_operand(first, i) is not None), None)
    operand = g.scalar_operand(first, data) if data is not None else None
    if data is None or operand is None:
        return None
    if first.op_type == "Add":
        return data, 1.0, operand, [first]
    add = g.only_user(first.output[0], "Add")
    if add is not None and (shift := g.scalar_operand(add, first.output[0])) is not None:
        return data, operand, shift, [first, add]
    return data, operand, 0.0, [first]


def _fold_affine_into_pointwise(g: _Graph) -> bool:
    """× s (→ + b) right before a 1×1 convolution without padding: folded into the convolution."""
    from onnx import helper

    for first in g.nodes:
        if (affine := _scalar_affine(g, first)) is None:
            continue
        data, scale, shift, chain = affine
        out = chain[-1].output[0]
        conv = g.only_user(out, "Conv")
        if conv is None or conv.input[0] != out or (params := _conv_weights(g, conv)) is None:
            continue
        weight, bias = params
        attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
        padded = any(attrs.get("pads", [])) or attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", b"VALID")
        if weight.shape[2:] != (1, 1) or padded:
            continue
        new_bias = bias + shift * weight.sum(axis=(1, 2, 3))
        g.replace([*chain, conv], [_new_conv(g, conv, weight * scale, new_bias, data, conv.output[0])])
        return True
    return False


def _affine_as_batchnorm(g: _Graph) -> bool:
    """× s (→ + b), or + b, left on a feature map (before a padded convolution, where folding the shift
    would change the border): one BatchNormalization with mean 0, variance 1 and epsilon 0, which
    onnxruntime runs in its blocked layout, where a scalar Add or Mul makes it convert the map out of
    that layout and back."""
    from onnx import helper

    for first in g.nodes:
        if (affine := _scalar_affine(g, first)) is None:
            continue
        data, scale, shift, chain = affine
        shape = g.maps.get(data)
        if shape is None or shape[1:] == (1, 1) or (scale == 1.0 and shift == 0.0):
            continue  # not a float map with known channels, a 1×1 map (no layout to keep), an identity
        channels = shape[0]
        name = g.add_name(first.name or "affine")
        constants = [
            g.add_const(f"{name}_{part}", np.full(channels, value, np.float32))
            for part, value in (("scale", scale), ("shift", shift), ("mean", 0.0), ("variance", 1.0))
        ]
        out = chain[-1].output[0]
        normalise = helper.make_node("BatchNormalization", [data, *constants], [out], name=name, epsilon=0.0)
        g.replace(chain, [normalise])
        return True
    return False


def _gate_shortcut(g: _Graph) -> bool:
    """x + x · s, with ``s`` one value per channel (a squeeze-and-excitation gate with its shortcut):
    x · (s + 1), one pass over the map instead of two."""
    from onnx import helper

    for mul in g.nodes:
        if mul.op_type != "Mul" or len(mul.input) != 2 or mul.input[0] == mul.input[1]:
            continue
        for x, gate in (mul.input, reversed(mul.input)):
            shape = g.maps.get(gate)
            add = g.only_user(mul.output[0], "Add")
            if (
                shape is None
                or shape[1:] != (1, 1)
                or add is None
                or sorted(add.input) != sorted([x, mul.output[0]])
            ):
                continue
            name = g.add_name(add.name or "gate")
            one = g.add_const(f"{name}_one", np.ones(1, np.float32))
            raised = helper.make_node(
                "Add", [gate, one], [g.add_value(f"{name}_raised")], name=f"{name}_raise"
            )
            g.replace(
                [mul, add],
                [raised, helper.make_node("Mul", [x, raised.output[0]], [add.output[0]], name=name)],
            )
            return True
    return False


def _per_channel(value: np.ndarray, channels: int) -> np.ndarray | None:
    """``value`` as ``channels`` numbers when it broadcasts over a (1, channels, h, w) map channel by
    channel without changing its shape."""
    if value.size == 1 and value.ndim <= 4:
        return np.full(channels, float(value.reshape(-1)[0]), np.float32)
    if value.ndim in (3, 4) and value.shape[-3:] == (channels, 1, 1) and value.size == channels:
        return value.reshape(channels).astype(np.float32)
    return None


def _fold_into_conv_transpose(g: _Graph) -> bool:
    """A transposed convolution (no groups), then + b per channel or a BatchNormalization with
    constant statistics: one transposed convolution (onnxruntime fuses neither into it)."""
    from onnx import helper

    for convt in g.nodes:
        if convt.op_type != "ConvTranspose" or len(convt.input) < 2 or convt.input[1] not in g.consts:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in convt.attribute}
        weight = g.consts[convt.input[1]].astype(np.float32)
        if attrs.get("group", 1) != 1 or weight.ndim != 4:
            continue
        channels = weight.shape[1]
        if g.maps.get(convt.output[0], (None,))[0] != channels:
            continue  # not a float map whose channels shape inference tells
        has_bias = len(convt.input) > 2 and bool(convt.input[2])
        if has_bias and convt.input[2] not in g.consts:
            continue
        bias = g.consts[convt.input[2]].astype(np.float32) if has_bias else np.zeros(channels, np.float32)
        out = convt.output[0]
        scale, shift = np.ones(channels, np.float32), np.zeros(channels, np.float32)
        users = g.users.get(out, [])
        follower = users[0] if len(users) == 1 and out not in g.outputs else None
        if follower is not None and follower.op_type == "Add" and len(follower.input) == 2:
            other = follower.input[1] if follower.input[0] == out else follower.input[0]
            found = _per_channel(g.consts[other], channels) if other in g.consts and other != out else None
            if found is None:
                continue
            shift = found
        elif (
            follower is not None
            and follower.op_type == "BatchNormalization"
            and len(follower.output) == 1
            and not any(a.name == "training_mode" and a.i for a in follower.attribute)
        ):
            params = [g.consts.get(name) for name in follower.input[1:5]]
            if len(params) != 4 or any(p is None or p.shape != (channels,) for p in params):
                continue
            gamma, beta, mean, variance = (np.asarray(p, np.float32) for p in params)
            epsilon = next((a.f for a in follower.attribute if a.name == "epsilon"), 1e-5)
            scale = gamma / np.sqrt(variance + np.float32(epsilon))
            shift = beta - mean * scale
        else:
            continue
        node = helper.make_node(
            "ConvTranspose",
            [
                convt.input[0],
                g.add_const(
                    convt.input[1] + "_folded", weight * scale[np.newaxis, :, np.newaxis, np.newaxis]
                ),
                g.add_const(follower.output[0] + "_bias", bias * scale + shift),
            ],
            [follower.output[0]],
            name=g.add_name(convt.name or "conv_transpose"),
        )
        node.attribute.extend(convt.attribute)
        g.replace([convt, follower], [node])
        return True
    return False


_PASSES = (
    _hard_swish,
    _fold_affine_after_conv,
    _fold_affine_into_pointwise,
    _affine_as_batchnorm,
    _gate_shortcut,
    _fold_into_conv_transpose,
)
"""In order, repeated until none applies. The BatchNormalization stand-in takes the scalar affines the
folds before it leave; it skips 1×1 maps, so the gate's ``+ 1`` stays an Add on the 1×1 gate."""

HARD_SWISH_OPSET = 14
"""The first ONNX opset with HardSwish; older models are converted to it first."""


def fold_model(data: bytes) -> tuple[bytes, int]:
    """The model in ``data`` with its elementwise layers folded, and how many rewrites were made."""
    import onnx
    from onnx import version_converter

    model = onnx.load_from_string(data)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), HARD_SWISH_OPSET)
    if opset < HARD_SWISH_OPSET:
        model = version_converter.convert_version(model, HARD_SWISH_OPSET)
    g = _Graph(model)
    rewrites, progress = 0, True
    while progress:
        progress = False
        for rewrite in _PASSES:
            while rewrite(g):
                rewrites += 1
                progress = True
    g.save()
    return model.SerializeToString(), rewrites
