import Foundation
import Testing
@testable import Lobby

/// WAL checkpoints run beside the writer, not inside the commits of requests: a burst of large
/// writes (photos, 100 pages each, 160 MB in all, back to back) wakes the background pass, the
/// log is started over (after a pass in a gap, or a short one between transactions) instead of
/// growing, no commit checkpoints in place, and everything written is there after a reopen.
@Suite struct CheckpointTests {
    @Test(.timeLimit(.minutes(5))) func largeWritesAreCheckpointedBesideTheWriter() async throws {
        let lobby = try await TestLobby(engine: .sqlite)
        let players = try await lobby.players("alice", "bob", "carol", "dave")
        var photos: [Int64: Data] = [:]
        for round in 0..<100 {
            for player in players {
                var bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                bytes.append(Data(repeating: UInt8(truncatingIfNeeded: round &* 7 &+ Int(player)), count: 400_000))
                _ = try await lobby.store.setPhoto(player, bytes: bytes)
                photos[player] = bytes
            }
        }
        // 400 photos of 400 kB: 160 MB through the log, past the 128 MB at which a commit would
        // checkpoint in place had the log not been started over at 64 MB.
        let checkpoints = lobby.store.checkpoints
        #expect(checkpoints.background > 0, "no background checkpoint ran")
        #expect(checkpoints.inCommit == 0, "\(checkpoints.inCommit) commits checkpointed in place")
        let log = try FileManager.default.attributesOfItem(atPath: lobby.path + "-wal")[.size] as? Int ?? 0
        #expect(log < WALCheckpointer.restartFrames * 4096 + 16_000_000, "the log grew to \(log) bytes: it was not started over in time")

        try lobby.store.close()
        let reopened = try LobbyStore(path: lobby.path, configuration: lobby.store.configuration, clock: lobby.clock)
        defer { try? reopened.close() }
        for (player, bytes) in photos {
            let name = try await reopened.player(player).username
            #expect(try await reopened.photo(viewer: player, username: name).bytes == bytes)
        }
    }
}
