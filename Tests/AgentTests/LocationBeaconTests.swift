import Agent
import BeaconFrames
import BusTestSupport
import DBus
import Foundation
import LobbyClient
import Testing

/// `nearplay beacon` against python-dbusmock's BlueZ on a private bus and a live lobby: it
/// registers its location and advertises the location's identity; an agent that hears it raises
/// a `location` event with the running tournaments, reports the encounter, and can then join a
/// tournament there and play its rounds; a player who was not there is refused.
@Suite(.serialized) struct LocationBeaconTests {
    @Test(.timeLimit(.minutes(5))) func theBeaconMarksALocationWhereAgentsJoinTournaments() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path, extraArguments: ["--minigames", "screamer,shaker,statue"]) }
        defer { lobby.kill() }
        let owner = try await register("owner", at: lobby.url)
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)
        let bus = try await PrivateBus()
        let mock = try await BlueZMock(bus: bus)
        _ = try await mock.addAdapter("hci0")

        // The operator's session, as the unit's LoadCredential= hands it over; the state folder as StateDirectory=.
        let credentials = folder.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try owner.credentials.save(to: credentials + "/credentials.json")
        // The site profile `calibrate ranging` stored for this device's adapter, which the beacon publishes.
        let config = folder.path + "/config"
        try FileManager.default.createDirectory(atPath: config + "/nearplay", withIntermediateDirectories: true)
        try #"{"receivers":{"hci0":{"rssiOffset":-2.5,"exponent":2.35,"distances":[1,3],"readings":150}}}"#
            .write(toFile: config + "/nearplay/ranging-profiles.json", atomically: true, encoding: .utf8)
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "CREDENTIALS_DIRECTORY": credentials,
                           "STATE_DIRECTORY": folder.path + "/beacon-state", "XDG_CONFIG_HOME": config]
        let beacon = try ChildProcess(try builtExecutable("nearplay"), ["beacon", "--location", "Hall", "--backend", "bluez", "--adapter", "hci0"],
                                      log: folder.path + "/beacon.log", environment: environment)
        defer { beacon.kill() }

        // The location's rotating identity goes on the air under the deployment's location UUID.
        var advertised: BeaconFrames.BeaconIdentity?
        _ = await eventually(timeout: 30) {
            guard let registered = try? await mock.registeredAdvertisement(),
                  let entries = registered.properties["ManufacturerData"]?.unwrapped.dictionaryValue,
                  let apple = entries.first(where: { $0.key.intValue == Int(CompanyIdentifier.apple.rawValue) }),
                  let bytes = apple.value.unwrapped.bytesValue,
                  let frame = try? IBeacon(company: .apple, manufacturerData: bytes) else { return false }
            advertised = frame.identity
            return true
        }
        let identity = try #require(advertised, "the beacon advertised nothing: \(beacon.output)")
        guard case let .iBeacon(uuid, major, minor) = identity else { throw AgentError("not an iBeacon: \(identity)") }
        let remembered = try String(contentsOfFile: folder.path + "/beacon-state/beacon-Hall.json", encoding: .utf8)
        let marked = try JSONDecoder().decode(MarkedLocation.self, from: Data(remembered.utf8))
        let key = try await owner.client.beaconKey(location: marked.id)
        #expect(uuid.description == key.locationUuid.uuidString && uuid.description != alice.beacon.uuid.uuidString,
                "the deployment's location UUID, not the players'")
        #expect(PlayerBeacon(uuid: key.locationUuid, major: Int(major), minor: Int(minor)) == (try await owner.client.currentBeacon(location: marked.id)),
                "the identity of the running period")
        #expect(marked.beaconKey?.secret.base64URL == key.secret, "the beacon keeps its key")
        let location = try await alice.client.resolveLocation(identity)
        #expect(location.name == "Hall" && location.owner == "owner")
        #expect(Set(location.tournaments.map(\.period.rawValue)) == ["daily", "weekly", "monthly"])
        #expect(location.siteProfile?.exponent == 2.35 && location.siteProfile?.distances == [1, 3], "\(beacon.output)")
        #expect(location.id == marked.id)

        // Alice's agent hears the location (a replayed radio) and says so, with its tournaments.
        // 13 dB below the 1 m power: 2.91 m with the default exponent 2.8, 3.58 m with Hall's 2.35.
        try writeTrace(ofLocation: key, rssi: -72, from: 0, seconds: 180, path: folder.path + "/hall.jsonl")
        let agent = try RunningAgent.start(alice, in: folder.path, radio: ["backend": "replay", "file": folder.path + "/hall.jsonl"],
                                           extra: ["recordings": roundSamples + "/alice"])
        defer { agent.process.kill() }
        #expect(await agent.waitUntilAnswering(), "alice's agent did not start: \(agent.process.output)")
        var event: AgentEvent?
        _ = await eventually(timeout: 60) {
            guard let lines = try? await blocking({ () -> [String] in
                var lines: [String] = []
                try agent.client.events(recent: AgentEventBus.historyLimit, idleTimeout: 1) { lines.append($0); return true }
                return lines
            }) else { return false }
            event = lines.compactMap { try? LobbyClient.decoder.decode(AgentEvent.self, from: Data($0.utf8)) }.first { $0.kind == .location }
            return event != nil
        }
        let seen = try #require(event, "no location event: \(agent.process.output)")
        #expect(seen.name == "Hall" && seen.location == location.id && seen.beacon?.hasPrefix(uuid.description) == true)
        #expect(seen.distance != nil)
        #expect(Set(seen.tournaments?.map(\.period) ?? []) == ["daily", "weekly", "monthly"])
        let nearby = try LobbyClient.decoder.decode([NearbyLocation].self, from: try await agent.send(.locations))
        #expect(nearby.map(\.name) == ["Hall"])
        // While Hall is in range the agent ranges with the exponent Hall published.
        var status = try await agent.status()
        _ = await eventually(timeout: 30) {
            status = (try? await agent.status()) ?? status
            return status.rangingSite == "Hall"
        }
        #expect(status.rangingSite == "Hall" && status.distanceModel == "log-distance(n=2.35)", "\(status)")
        var hall: NearbyLocation?
        _ = await eventually(timeout: 30) {
            hall = (try? LobbyClient.decoder.decode([NearbyLocation].self, from: try await agent.send(.locations)))?.first
            return hall?.distance.map { abs($0 - 3.58) < 0.05 } ?? false
        }
        #expect(hall?.distance.map { abs($0 - 3.58) < 0.05 } == true, "Hall's distance with its own exponent: \(String(describing: hall))")
        let listed = try LobbyClient.decoder.decode([NearbyLocation].self, from: try await agent.send(.tournaments()))
        let daily = try #require(listed.first?.tournaments.first { $0.period == .daily })
        // And through the CLI, as a user types it.
        for (arguments, expected) in [(["nearby"], "Hall"), (["tournaments"], "daily"), (["status"], "the site profile of Hall")] {
            let cli = try ChildProcess(try builtExecutable("nearplay"), arguments + ["--socket", agent.socket],
                                       log: folder.path + "/cli-\(arguments[0]).log")
            await cli.process.wait()
            #expect(cli.process.status == 0 && cli.output.contains(expected), "\(cli.output)")
        }

        // Bob was never there: the lobby refuses him.
        await #expect {
            _ = try await bob.client.joinTournament(daily.id)
        } throws: { error in
            (error as? LobbyClientError)?.status == 403 && (error as? LobbyClientError)?.code == "notNearLocation"
        }

        // Alice's agent reported the encounter, so she may join; her agent plays every round from
        // recorded inputs, and the lobby verifies each score.
        let join = try ChildProcess(try builtExecutable("nearplay"), ["join", String(daily.id), "--json", "--socket", agent.socket],
                                    log: folder.path + "/cli-join.log")
        await join.process.wait()
        #expect(join.process.status == 0, "\(join.output)")
        let report = try LobbyClient.decoder.decode(TournamentReport.self, from: Data(join.output.utf8))
        #expect(report.entry.rounds.map(\.game) == daily.minigames)
        #expect(report.played.map(\.round) == Array(1...daily.minigames.count))
        let total = report.played.map(\.score).reduce(0, +)
        let verified = await eventually(timeout: 60) {
            guard let entry = try? await alice.client.tournamentEntry(daily.id) else { return false }
            return entry.rounds.allSatisfy { $0.score != nil } && entry.total == total
        }
        #expect(verified, "the scores did not reach the lobby: \(agent.process.output)")
        let standings = try await alice.client.tournament(daily.id).standings
        #expect(standings?.first?.player == "alice" && standings?.first?.rank == 1)

        // SIGTERM withdraws the advertisement and exits 0; a restart re-uses the location.
        #expect(try await blocking { beacon.stop(signal: SIGTERM) } == 0, "\(beacon.output)")
        #expect(await eventually(timeout: 10) { (try? await mock.registeredAdvertisement()) == nil })
        let again = try ChildProcess(try builtExecutable("nearplay"), ["beacon", "--location", "Hall", "--backend", "bluez", "--adapter", "hci0"],
                                     log: folder.path + "/beacon-2.log", environment: environment)
        defer { again.kill() }
        #expect(await eventually(timeout: 30) { (try? await mock.registeredAdvertisement()) != nil }, "\(again.output)")
        #expect(again.output.contains("Location Hall (\(marked.id))"), "\(again.output)")
        #expect(try await blocking { again.stop(signal: SIGTERM) } == 0, "\(again.output)")

        // With the lobby away, the beacon advertises the location it remembers.
        lobby.stop()
        let remembering = try ChildProcess(try builtExecutable("nearplay"), ["beacon", "--location", "Hall", "--backend", "bluez", "--adapter", "hci0"],
                                           log: folder.path + "/beacon-3.log", environment: environment)
        defer { remembering.kill() }
        #expect(await eventually(timeout: 60) { (try? await mock.registeredAdvertisement()) != nil }, "\(remembering.output)")
        #expect(remembering.output.contains("from memory") && remembering.output.contains("Location Hall (\(marked.id))"), "\(remembering.output)")
        #expect(try await blocking { remembering.stop(signal: SIGTERM) } == 0, "\(remembering.output)")
    }

    @Test func theBeaconSaysWhatToDoWithoutASession() async throws {
        let folder = try TemporaryFolder()
        let command = try ChildProcess(try builtExecutable("nearplay"), ["beacon", "--location", "Hall", "--credentials", folder.path + "/none.json"],
                                       log: folder.path + "/beacon.log")
        defer { command.kill() }
        await command.process.wait()
        #expect(command.process.status != 0)
        #expect(command.output.contains("nearplay login"), "\(command.output)")
    }
}
