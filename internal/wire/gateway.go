package wire

const (
	ActivityListGatewayTools = "ListGatewayTools"
)
