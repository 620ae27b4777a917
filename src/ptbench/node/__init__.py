"""What a compute node offers a trial: its GPUs through NVML (`nvml`), the pre-agent GPU check
(`gpus`), and the resource monitor of a running trial (`monitor`). Imports only `ptbench.core`."""
