"""What a compute node offers a trial: its GPUs through NVML (`nvml`), the pre-agent GPU check
(`gpus`), and the resource monitor of a running trial (`monitor`), the trial's cgroup (`cgroup`).
Imports only `ptbench.core`."""
