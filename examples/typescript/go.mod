// The TypeScript examples are no Go code, but npm installs Go sources of
// their dependencies into their node_modules; a module of its own keeps
// them out of the main module's ./... .
module toolround.local/examples/typescript

go 1.26
