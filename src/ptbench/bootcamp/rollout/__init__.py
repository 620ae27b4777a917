"""The bootcamp's rollouts: the shard runner, one episode's multi-turn loop, the chat client, the
episode traces and their merge into one dataset."""
