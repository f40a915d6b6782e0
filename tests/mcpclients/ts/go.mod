// The TypeScript SDK's test client is no Go code, but npm installs Go
// sources of some packages into node_modules; a module of its own keeps
// them out of the main module's ./... .
module toolround.local/tests/mcpclients/ts

go 1.26
