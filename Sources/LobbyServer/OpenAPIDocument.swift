/// The OpenAPI 3 description of `/v1` (Sources/LobbyServer/openapi.yaml, embedded in the binary
/// so a lobby is still one file), served at `GET /v1/openapi.yaml`. Tests check that every route
/// of the router is described there and every path there is routed, and that a strict validator
/// accepts it.
enum OpenAPIDocument {
    static let text = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)
}
