# Sourced by each call: the loaders and headers the node lacks (Debian 12 debs), NVIDIA's Vulkan ICD.
export PATH=/usr/local/cuda/bin:$PATH
for f in .gpu-lead/debs/*.deb .gpu-lead/dev/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
