import Crypto
import Foundation
import LobbyAPI
import Testing

/// The client's types and calls (Sources/LobbyAPI/Generated) are generated from the lobby's
/// OpenAPI document and committed; this holds them to the document they were generated from.
@Suite struct GeneratedClientTests {
    @Test func theGeneratedClientIsTheDocumentsCurrentOne() throws {
        let document = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/LobbyServer/openapi.yaml")
        let digest = SHA256.hash(data: try Data(contentsOf: document)).map { String(format: "%02x", $0) }.joined()
        #expect(
            digest == lobbyAPIDocumentDigest,
            "Sources/LobbyServer/openapi.yaml changed after Sources/LobbyAPI/Generated was made from it: run scripts/generate-lobby-api and commit what it writes.")
    }
}
