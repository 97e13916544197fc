import BeaconFrames
import Foundation
import Testing
@testable import Agent

/// The location a beacon device remembers: its identity is the radio's `BeaconIdentity`, its
/// file keeps the lobby's form, so files written before still read.
@Suite struct MarkedLocationTests {
    @Test func readsAndWritesTheRememberedFileInTheLobbysForm() throws {
        let file = #"{"beacon":{"major":0,"minor":7,"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"},"id":7,"lobby":"http:\/\/lobby","name":"Hall"}"#
        let marked = try JSONDecoder().decode(MarkedLocation.self, from: Data(file.utf8))
        let uuid = try #require(BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        #expect(marked == MarkedLocation(lobby: "http://lobby", id: 7, name: "Hall", beacon: .iBeacon(uuid: uuid, major: 0, minor: 7)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(marked), as: UTF8.self) == file)
    }
}
