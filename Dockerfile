# mae on a GPU workstation: the demo and CLI with the Perceptor's local models (GroundingDINO, local
# captions) on CUDA, and adb for a phone on USB (through the host's adb server) or Wi-Fi.
# The backbone VLM runs beside it in vLLM's own image: see docker-compose.yml and README "GPU workstation".
#
#   docker build --build-arg MAE_UID=$(id -u) --build-arg MAE_GID=$(id -g) -t mae:gpu .
#   mkdir -p mae-data && docker run --gpus all -p 127.0.0.1:7860:7860 -v "$PWD/mae-data:/data" \
#     -e MAE_PUBLIC=0 -e MAE_BACKBONE=openai -e OPENAI_API_KEY mae:gpu
#
# MAE_PUBLIC=0 says the port is published on 127.0.0.1 only (a private demo: the server's keys are used);
# the image's default MAE_PUBLIC=1 treats every visitor as anonymous (docs/docker.md).
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
FROM ${CUDA_IMAGE}

# torch wheel index matching the CUDA base (cu128 for CUDA 12.8), and the GPU extras of the Perceptor
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
ARG TORCH_VERSION=2.8.0
ARG GPU_EXTRAS="transformers>=4.49 accelerate>=0.30 qwen-vl-utils>=0.0.8"
# the user mae runs as: give the UID and GID that own the host folders mounted at /data and /models
ARG MAE_UID=1000
ARG MAE_GID=1000

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# adb for phones; libgl/libglib for OpenCV and onnxruntime
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv adb libgl1 libglib2.0-0 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv

# Ubuntu 24.04 already has the user `ubuntu` as 1000:1000: add-user.sh frees the UID for mae
COPY docker/add-user.sh /usr/local/bin/mae-add-user
RUN mae-add-user "${MAE_UID}" "${MAE_GID}"

WORKDIR /app
COPY requirements.txt ./
RUN pip install "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX_URL}" \
    && pip install -r requirements.txt ${GPU_EXTRAS}

COPY . /app
RUN pip install --no-deps . \
    && mkdir -p /data /models \
    && chown mae:mae /data /models

USER ${MAE_UID}:${MAE_GID}
ENV MAE_LOG_DIR=/data/runs \
    MAE_MEMORY_DIR=/data/memory \
    MAE_MODELS_DIR=/models \
    HF_HOME=/models/huggingface \
    MAE_APP=/app/app.py \
    GRADIO_SERVER_NAME=0.0.0.0 \
    MAE_PUBLIC=1 \
    GRADIO_SERVER_PORT=7860
VOLUME ["/data", "/models"]
EXPOSE 7860

HEALTHCHECK --interval=30s --timeout=10s --start-period=1860s --retries=3 CMD ["/app/docker/healthcheck.sh"]
ENTRYPOINT ["/app/docker/entrypoint.sh"]
CMD ["demo"]
