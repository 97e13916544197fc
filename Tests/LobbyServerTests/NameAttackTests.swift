import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import Lobby
@testable import LobbyServer

/// Issue 21, accounts 9 and the smaller points: look-alike usernames, invisible characters,
/// direction controls and mixed scripts in names, and a deleted player's username kept reserved.
@Suite struct NameAttackTests {
    // MARK: Accounts 9: look-alike players

    @Test func aUsernameThatLooksLikeAnotherIsRefused() async throws {
        try await liveLobby { port in
            let client = HTTPProbe(port: port)
            _ = try await client.player("alice")
            for lookalike in ["aIice", "ALICE", "a1ice", "al1ce"] {
                let answer = try await client.register(lookalike)
                #expect(answer.status == 409 && answer.code == "usernameTaken", "\(lookalike): \(answer.body)")
            }
            _ = try await client.player("bob_0")
            #expect(try await client.register("bob.o").status == 409)
            #expect(try await client.register("alicia").status == 201)
        }
    }

    @Test(arguments: [
        "Al\u{202E}ecila", "Al\u{200D}ice", "\u{FEFF}Alice", "Alice\u{3164}", "\u{115F}", "Ali\u{200B}ce", "A\u{2066}lice\u{2069}",
        "H\u{0430}ll", "\u{0391}lice",
    ])
    func aNameWithInvisibleCharactersDirectionControlsOrMixedScriptsIsRefused(name: String) async throws {
        try await liveLobby { port in
            let client = HTTPProbe(port: port)
            let alice = try await client.player("alice")
            let answer = try await client.call(.patch, "/v1/players/me", token: alice, json: #"{"firstName":"\#(name)"}"#)
            #expect(answer.status == 400 && answer.code == "invalidField", "\(name.unicodeScalars.map { String($0.value, radix: 16) }): \(answer.body)")
        }
    }

    @Test func namesInOneScriptAndEmojiSequencesAreAccepted() async throws {
        try await liveLobby { port in
            let client = HTTPProbe(port: port)
            let alice = try await client.player("alice")
            for name in ["Zoë", "José María", "Привет", "Ἀλέξανδρος", "李小龍", "Dev 👩‍💻", "Love ❤️", "Anne-Marie"] {
                let answer = try await client.call(.patch, "/v1/players/me", token: alice, json: #"{"firstName":"\#(name)"}"#)
                #expect(answer.status == 200, "\(name): \(answer.body)")
            }
        }
    }

    @Test func aDeletedPlayersUsernameStaysReserved() async throws {
        try await liveLobby { port in
            let client = HTTPProbe(port: port)
            let bob = try await client.player("bob")
            #expect(try await client.call(.delete, "/v1/players/me", token: bob).status == 204)
            #expect(try await client.register("bob").status == 409)
            #expect(try await client.register("B0B").status == 409)
        }
    }

    // MARK: Fair play 14: location names follow the same rules and are rationed per account

    @Test func locationNamesFollowTheNameRulesAndAreRationedPerAccount() async throws {
        try await liveLobby { port in
            let client = HTTPProbe(port: port)
            let alice = try await client.player("alice")
            let cyrillic = try await client.call(.post, "/v1/locations", token: alice, json: #"{"name":"H\#u{0430}ll"}"#)
            #expect(cyrillic.status == 400 && cyrillic.code == "invalidField", "\(cyrillic.body)")
            let invisible = try await client.call(.post, "/v1/locations", token: alice, json: #"{"name":"Ha\#u{200B}ll"}"#)
            #expect(invisible.status == 400, "\(invisible.body)")
            for n in 1...5 {
                #expect(try await client.call(.post, "/v1/locations", token: alice, json: #"{"name":"Hall \#(n)"}"#).status == 201)
            }
            let sixth = try await client.call(.post, "/v1/locations", token: alice, json: #"{"name":"Hall 6"}"#)
            #expect(sixth.status == 409 && sixth.code == "locationLimitReached", "\(sixth.body)")
            // A beacon device registering its own location again is not a new name.
            #expect(try await client.call(.post, "/v1/locations", token: alice, json: #"{"name":"Hall 1"}"#).status == 200)
        }
    }
}
