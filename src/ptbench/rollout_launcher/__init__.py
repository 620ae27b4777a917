"""The bootcamp rollout launcher: `ptbench bootcamp rollout` on any backend.

It speaks the bootcamp's replica protocol (bootcamp/serving/replicas.py: the run's token, `done`) and drives
a backend only through the `Backend` protocol's argv units (`prepare_units`, `submit_units`,
`wait_units`, `stop_units`), so it sits in a layer of its own above `backends/`, which knows no
rollout: launch.py submits a rollout's shards and tool-server replicas, tool_replicas.py keeps
replicas up for a block, shards.py gives their rows in `ptbench status`, units.py the argv of each,
htcondor.py the HTCondor descriptions for a reader.
"""
