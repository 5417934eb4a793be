package workflows

// Registration of the workflows on a worker.

// Register registers every workflow of a cosci worker.
func Register(r interface{ RegisterWorkflow(any) }) {
	r.RegisterWorkflow(ResearchSession)
	r.RegisterWorkflow(Subagent)
	r.RegisterWorkflow(Heartbeat)
	r.RegisterWorkflow(ArchiveSession)
	r.RegisterWorkflow(ToolCatalog)
}
