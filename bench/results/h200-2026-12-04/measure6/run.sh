#!/bin/bash
# Six fresh ROSTER_TUNING=measure decisions on the node, each with an empty
# tuning folder, over CUDA, Vulkan (NVIDIA's driver) and OpenCL (NVIDIA's and
# PoCL's): which adapter leads the GPU circuit, and each run's records.
export PATH=/usr/local/cuda/bin:$PATH
G=$PWD/.gpu-run
O=$OUT
for f in $G/debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$G/bin:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cp $G/commit.txt $O/ 2>/dev/null
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv; nproc; uptime; ls /etc/OpenCL/vendors; } > $O/node.txt 2>&1
for i in 1 2 3 4 5 6; do
  rm -rf /tmp/xdg-$i; mkdir -p /tmp/xdg-$i
  s=$(date +%s%N)
  ROSTER_TUNING=measure XDG_CACHE_HOME=/tmp/xdg-$i $G/bin/devices > $O/measure-$i.txt 2>&1; echo "exit $?" >> $O/measure-$i.txt
  e=$(date +%s%N); echo "run $i: $(( (e-s)/1000000 )) ms" >> $O/times.txt
  cp /tmp/xdg-$i/roster/tuning.json $O/tuning-$i.json
  grep -E "^decision \(primary\)|^circuit [0-9]+ .*preferred" $O/measure-$i.txt | sed "s/^/run $i: /" >> $O/summary.txt
done
# A seventh with the sixth's records: read mode decides the same without measuring.
XDG_CACHE_HOME=/tmp/xdg-6 $G/bin/devices > $O/read-after-6.txt 2>&1; echo "exit $?" >> $O/read-after-6.txt
grep -E "^decision \(primary\)" $O/read-after-6.txt | sed "s/^/read: /" >> $O/summary.txt
cat $O/summary.txt $O/times.txt
