/// The OpenAPI 3 description of `/v1` (Sources/LobbyServer/openapi.yaml, embedded in the binary
/// so a lobby is still one file), served at `GET /v1/openapi.yaml`. Tests check that every route
/// of the router is described there and every path there is routed, and that a strict validator
/// accepts it.
enum OpenAPIDocument {
    static let text = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)

    /// Each documented path template (`/v1/games/{id}`) with its methods (`GET`, `POST`…).
    static let operations: [(template: [Substring], methods: [String])] = {
        var result: [(template: [Substring], methods: [String])] = []
        var inPaths = false
        for line in text.split(separator: "\n") {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, let first = line.first, first != " " { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                result.append((line.dropFirst(2).dropLast().split(separator: "/"), []))
            } else if let match = line.wholeMatch(of: #/    (get|post|put|patch|delete):/#), !result.isEmpty {
                result[result.count - 1].methods.append(match.1.uppercased())
            }
        }
        return result
    }()

    /// The methods the document gives `path` (a request's path), none when it has no such path.
    static func methods(of path: String) -> [String] {
        let segments = path.split(separator: "/")
        // The most literal template wins (/v1/players/me before /v1/players/{username}).
        let matching = operations.filter { operation in
            operation.template.count == segments.count
                && zip(operation.template, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
        return matching.min { $0.template.filter { $0.hasPrefix("{") }.count < $1.template.filter { $0.hasPrefix("{") }.count }?.methods ?? []
    }
}
