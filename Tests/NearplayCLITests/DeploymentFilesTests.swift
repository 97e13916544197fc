import BusTestSupport
import DBus
import Foundation
import Testing

/// The systemd units in `systemd/` and the D-Bus policy in `dbus/`: they parse, carry what running
/// Nearplay for real needs, and load into the programs that read them.
@Suite struct DeploymentFilesTests {
    static let units = ["nearplay-agent.service", "nearplay-lobby.service", "nearplay-beacon@.service"]
    static let policy = repositoryRoot.appendingPathComponent("dbus/nearplay.conf").path

    /// A unit file as section → key → values (a key may repeat), as systemd reads it: comments
    /// start with # or ;, a line ending in a backslash continues on the next.
    static func parse(_ name: String) throws -> [String: [String: [String]]] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
        var sections: [String: [String: [String]]] = [:]
        var section: String?
        var pending = ""
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = pending + raw.trimmingCharacters(in: .whitespaces)
            pending = ""
            if line.hasSuffix("\\") {
                line.removeLast()
                pending = line + " "
                continue
            }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                #expect(line.hasSuffix("]"), "\(name):\(number + 1): a section header ends with ]")
                section = String(line.dropFirst().dropLast())
                continue
            }
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let section, parts.count == 2 else {
                Issue.record("\(name):\(number + 1): “\(line)” is neither a section header nor KEY=VALUE inside one")
                continue
            }
            let key = parts[0].trimmingCharacters(in: .whitespaces)
            sections[section, default: [:]][key, default: []].append(parts[1].trimmingCharacters(in: .whitespaces))
        }
        return sections
    }

    static let hardening: [String: String] = [
        "User": "nearplay", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
        "NoNewPrivileges": "yes", "KillSignal": "SIGTERM", "Restart": "on-failure",
    ]

    @Test func theAgentIsAUserServiceStoppedBySIGTERMWithinFiveSeconds() throws {
        let unit = try Self.parse("nearplay-agent.service")
        let service = try #require(unit["Service"])
        #expect(service["ExecStart"] == ["/usr/local/bin/nearplay agent"])
        #expect(service["Restart"] == ["on-failure"])
        #expect(service["KillSignal"] == ["SIGTERM"])
        #expect(service["TimeoutStopSec"] == ["5"])
        #expect(service["User"] == nil, "a user service runs as its user")
        #expect(service["RuntimeDirectory"] == ["nearplay"], "its socket folder, $XDG_RUNTIME_DIR/nearplay")
        #expect(unit["Install"]?["WantedBy"] == ["default.target"], "user services are wanted by default.target")
    }

    @Test func theLobbyRunsHardenedAsNearplayWithItsDatabaseInItsStateDirectory() throws {
        let service = try #require(try Self.parse("nearplay-lobby.service")["Service"])
        #expect(service["ExecStart"] == [
            "/usr/local/bin/nearplay lobby serve --db /var/lib/nearplay-lobby/lobby.sqlite --host 0.0.0.0 --port 8080",
        ])
        for (key, value) in Self.hardening { #expect(service[key] == [value], "\(key)") }
        #expect(service["StateDirectory"] == ["nearplay-lobby"])
        #expect(service["RuntimeDirectory"]?.isEmpty == false)
        #expect(service["DynamicUser"] == ["yes"])
    }

    @Test func theBeaconIsATemplateOnTheLocationHardenedInGroupBluetooth() throws {
        let unit = try Self.parse("nearplay-beacon@.service")
        let service = try #require(unit["Service"])
        #expect(service["ExecStart"] == ["/usr/local/bin/nearplay beacon --location %i --profiles /etc/nearplay/ranging-profiles.json"],
                "a dynamic user has no ~/.config: the site profile to publish comes from /etc")
        for (key, value) in Self.hardening { #expect(service[key] == [value], "\(key)") }
        #expect(service["SupplementaryGroups"] == ["bluetooth"])
        #expect(service["StateDirectory"] == ["nearplay-beacon/%i"], "the location is remembered per instance ($STATE_DIRECTORY)")
        #expect(service["LoadCredential"]?.first?.hasPrefix("credentials.json:") == true,
                "the session arrives as $CREDENTIALS_DIRECTORY/credentials.json, which `nearplay beacon` reads")
        #expect(service["RuntimeDirectory"]?.isEmpty == false)
        #expect(unit["Unit"]?["After"]?.first?.contains("bluetooth.service") == true)
    }

    /// The raw HCI drop-in grants exactly the two capabilities and the Bluetooth socket family.
    @Test func theHCIDropInGrantsRawSocketsAndNothingMore() throws {
        let service = try #require(try Self.parse("nearplay-hci.conf")["Service"])
        #expect(service["AmbientCapabilities"] == ["CAP_NET_RAW CAP_NET_ADMIN"])
        #expect(service["CapabilityBoundingSet"] == ["CAP_NET_RAW CAP_NET_ADMIN"])
        #expect(service["RestrictAddressFamilies"] == ["AF_BLUETOOTH"])
        #expect(service["ExecStart"] == ["", "/usr/local/bin/nearplay beacon --location %i --backend hci --profiles /etc/nearplay/ranging-profiles.json"])
    }

    static var systemdAnalyze: String? {
        ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `systemd-analyze verify`, with ExecStart pointed at a stub (it checks that the program
    /// exists). It exits 0 even for settings it ignores, so any line naming a unit fails the test.
    @Test(.enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed (scripts/bootstrap installs it); the key checks above still ran"))
    func systemdAnalyzeVerifiesEveryUnitWithoutAWarning() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = folder.appendingPathComponent("nearplay").path
        try "#!/bin/sh\nexit 0\n".write(toFile: stub, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub)
        let runtime = folder.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        func stubbed(_ name: String, as copy: String? = nil) throws -> String {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            let path = folder.appendingPathComponent(copy ?? name).path
            try text.replacingOccurrences(of: "/usr/local/bin/nearplay", with: stub)
                .write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        // A template is verified through an instance of it.
        let system = [try stubbed("nearplay-lobby.service"), try stubbed("nearplay-beacon@.service", as: "nearplay-beacon@hall.service")]
        let user = [try stubbed("nearplay-agent.service")]
        for (arguments, files) in [(["verify", "--man=no"], system), (["--user", "verify", "--man=no"], user)] {
            // The user manager needs XDG_RUNTIME_DIR, even offline.
            let finished = try await SpawnedProcess(Self.systemdAnalyze!, arguments + files,
                                                    environment: ["XDG_RUNTIME_DIR": runtime.path]).finish()
            let text = finished.stdout + finished.stderr
            #expect(finished.status == 0, "systemd-analyze \(arguments): \(text)")
            let complaints = text.split(separator: "\n").filter { line in files.contains { line.contains($0) } }
            #expect(complaints.isEmpty, "systemd-analyze \(arguments):\n\(complaints.joined(separator: "\n"))")
        }
    }

    /// The policy loads into a dbus-daemon (which refuses to start on a policy it cannot parse),
    /// and the bus then serves clients.
    @Test func dbusDaemonLoadsThePolicy() async throws {
        let bus = try await PrivateBus(includes: [Self.policy])
        defer { bus.stop() }
        let connection = try await bus.connect()
        #expect(connection.uniqueName.hasPrefix(":"))
        connection.close()
    }

    /// What the policy allows, on a bus that otherwise refuses method calls as the system bus
    /// does: a copy naming the user running the tests instead of `nearplay` may call bluetoothd's
    /// Adapter1, LEAdvertisingManager1, ObjectManager and Properties, and nothing else of it.
    @Test func thePolicyAllowsTheBlueZInterfacesNearplayUsesAndNothingElse() async throws {
        let user = try #require(getpwuid(getuid())).pointee.pw_name.map { String(cString: $0) }
        let text = try String(contentsOfFile: Self.policy, encoding: .utf8)
        #expect(text.contains(#"<policy user="nearplay">"#))
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-policy-\(UUID().uuidString).conf")
        try text.replacingOccurrences(of: #"<policy user="nearplay">"#, with: "<policy user=\"\(user ?? "root")\">")
            .write(to: copy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: copy) }
        let bus = try await PrivateBus(defaultPolicy: """
            <policy context="default">
              <allow own="*"/>
              <deny send_type="method_call"/>
              <allow send_destination="org.freedesktop.DBus"/>
              <allow send_type="signal"/>
              <allow send_requested_reply="true" send_type="method_return"/>
              <allow send_requested_reply="true" send_type="error"/>
              <allow receive_type="method_call"/>
              <allow receive_type="method_return"/>
              <allow receive_type="error"/>
              <allow receive_type="signal"/>
            </policy>
            """, includes: [copy.path])
        defer { bus.stop() }

        // A stand-in for bluetoothd: the interfaces the policy names, and one it does not.
        let bluetoothd = try await bus.connect()
        defer { bluetoothd.close() }
        let ok = { (name: String) in DBusExportedMethod(name: name) { _ in [] } }
        try await bluetoothd.export(DBusExportedObject(path: "/", interfaces: [], isObjectManager: true))
        try await bluetoothd.export(DBusExportedObject(path: "/org/bluez/hci0", interfaces: [
            DBusExportedInterface(name: "org.bluez.Adapter1", methods: [ok("StartDiscovery")],
                                  properties: ["Powered": .boolean(true)]),
            DBusExportedInterface(name: "org.bluez.LEAdvertisingManager1", methods: [ok("UnregisterAdvertisement")]),
            DBusExportedInterface(name: "org.bluez.GattManager1", methods: [ok("RegisterApplication")]),
        ]))
        try await bluetoothd.requestName("org.bluez")

        let nearplay = try await bus.connect()
        defer { nearplay.close() }
        func call(_ interface: String, _ member: String, path: DBusObjectPath = "/org/bluez/hci0",
                  _ body: [DBusValue] = []) async throws {
            _ = try await nearplay.call(destination: "org.bluez", path: path, interface: interface, member: member,
                                        body: body, timeout: .seconds(5))
        }
        try await call("org.bluez.Adapter1", "StartDiscovery")
        try await call("org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement")
        try await call("org.freedesktop.DBus.ObjectManager", "GetManagedObjects", path: "/")
        try await call("org.freedesktop.DBus.Properties", "GetAll", [.string("org.bluez.Adapter1")])
        let denied = await #expect(throws: DBusError.self) { try await call("org.bluez.GattManager1", "RegisterApplication") }
        #expect(denied?.name == "org.freedesktop.DBus.Error.AccessDenied", "\(String(describing: denied))")
    }

    /// The load check has teeth: a policy with a mistake stops the daemon starting.
    @Test func dbusDaemonRefusesAPolicyWithAMistake() async throws {
        let text = try String(contentsOfFile: Self.policy, encoding: .utf8)
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-policy-\(UUID().uuidString).conf")
        try text.replacingOccurrences(of: "send_interface=\"org.bluez.Adapter1\"", with: "send_interfaces=\"org.bluez.Adapter1\"")
            .write(to: broken, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: broken) }
        await #expect(throws: TestEnvironmentError.self) { _ = try await PrivateBus(includes: [broken.path]) }
    }
}
