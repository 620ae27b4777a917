"""Where one agent run happens: the trial's gateway (trial_gateway.py) and the sandbox request
(solve_launch.py), shared by the solve stage and the integrity judge."""
