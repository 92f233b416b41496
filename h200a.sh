#!/usr/bin/env bash
# scratch (untracked): early H200 measurement of the shader copies
R="bash /opt/vkkit/run.sh bash scripts/kit-suite.sh /opt/vkkit/jars target/kit/cp"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
KIT_BENCHES="SweepBench --rows 50000000 --runs 2 --queries 8 --concurrent 16 --sweeps bs --variants vk_device,spark_sql;MatrixBench --rows 50000000 --runs 3 --cases poly,saxpy --sources cache,parquet" \
  KIT_BENCH_TIMEOUT=240 KIT_BENCH_HEAP=64g $R /tmp/b benches
rc=$?
mkdir -p $OUT/a && cp /tmp/b/*.json /tmp/b/*.log $OUT/a/ 2>/dev/null
echo "benches rc=$rc"
