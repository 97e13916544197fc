import Agent
import BeaconFrames
import BusTestSupport
import DBus
import Foundation
import LobbyClient
import Testing

/// One agent on the BlueZ backend, against python-dbusmock's BlueZ on a private bus and a live
/// lobby: it recognises a device it sees as a registered player and advertises its own identity.
@Suite(.serialized) struct BlueZAgentTests {
    @Test(.timeLimit(.minutes(5))) func recognisesADeviceAndAdvertisesItsIdentity() async throws {
        let folder = try TemporaryFolder()
        let lobby = try await blocking { try LobbyProcess(folder: folder.path) }
        defer { lobby.kill() }
        let alice = try await register("alice", at: lobby.url)
        let bob = try await register("bob", at: lobby.url)

        let bus = try await PrivateBus()
        let mock = try await BlueZMock(bus: bus)
        _ = try await mock.addAdapter("hci0")
        let device = try await mock.addDevice("C0:FF:EE:00:00:02")
        guard case let .iBeacon(uuid, major, minor)? = bob.beacon.beaconIdentity else { throw AgentError("bob has no iBeacon identity") }
        let bobFrame = IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59)

        let (config, socket) = try prepareAgent(alice, in: folder.path, radio: ["backend": "bluez", "adapter": "hci0"])
        let agent = try ChildProcess(try builtExecutable("nearplay"), ["agent", "--config", config], log: folder.path + "/alice.log",
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { agent.kill() }
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) }, "the agent never opened its socket: \(agent.output)")

        // Bob's device keeps advertising, as bluetoothd reports it: RSSI and manufacturer data.
        let advertising = Task {
            var rssi: Int16 = -62
            while !Task.isCancelled {
                try? await mock.advertise(device, rssi: rssi, manufacturerData: [CompanyIdentifier.apple.rawValue: bobFrame.manufacturerData])
                rssi = rssi == -62 ? -63 : -62
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { advertising.cancel() }

        let recognised = await eventually(timeout: 30) {
            guard let data = try? await blocking({ try AgentClient(path: socket).send(.nearby) }),
                  let players = try? LobbyClient.decoder.decode([NearbyPlayer].self, from: data) else { return false }
            return players.contains { $0.username == "bob" && $0.name == "Bob Tester" && $0.distance != nil }
        }
        #expect(recognised, "bob was never shown nearby: \(agent.output)")

        // Alice's own identity is on the air: an iBeacon in Apple's manufacturer data.
        let advertised = await eventually(timeout: 20) {
            guard let registered = try? await mock.registeredAdvertisement(),
                  let entries = registered.properties["ManufacturerData"]?.unwrapped.dictionaryValue,
                  let apple = entries.first(where: { $0.key.intValue == Int(CompanyIdentifier.apple.rawValue) }),
                  let bytes = apple.value.unwrapped.bytesValue,
                  let frame = try? IBeacon(company: .apple, manufacturerData: bytes) else { return false }
            return frame.identity == alice.beacon.beaconIdentity
        }
        #expect(advertised, "alice's identity was not advertised: \(agent.output)")

        // SIGTERM withdraws the advertisement and exits 0.
        #expect(try await blocking { agent.stop(signal: SIGTERM) } == 0, "\(agent.output)")
        #expect(await eventually(timeout: 10) { (try? await mock.registeredAdvertisement()) == nil })
    }
}
