// The TypeScript client is no Go code, but npm installs Go sources of its
// dependencies into its node_modules; a module of its own keeps them out
// of the main module's ./... .
module toolround.local/clients/typescript

go 1.26
