"""The bootcamp's tools at work: heavy tools in killable workers, the tool server shared by shards,
its replicas' protocol (token, announcements, `done`) and the shard's pool of replicas."""
