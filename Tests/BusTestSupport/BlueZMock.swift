import DBus
import Foundation

/// python-dbusmock's `bluez5` template (extended by Tests/Fixtures/bluez5_nearplay.py) serving
/// `org.bluez` on a ``PrivateBus``, plus typed calls to its mock interface.
public final class BlueZMock: @unchecked Sendable {
    public let bus: PrivateBus
    private var process: SpawnedProcess?
    private var control: DBusConnection

    public static let mockInterface = "org.bluez.Mock"

    /// Starts the mock on `bus` and waits until it owns `org.bluez`.
    public init(bus: PrivateBus) async throws {
        self.bus = bus
        control = try await bus.connect()
        try await start()
    }

    deinit {
        kill()
        control.close()
    }

    /// The venv's python, from `NEARPLAY_VENV` or `<repository>/.venv`.
    static func python() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["NEARPLAY_VENV"] ?? repositoryRoot.appendingPathComponent(".venv").path
        let python = "\(venv)/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestEnvironmentError("no Python venv with python-dbusmock at \(venv): run scripts/bootstrap")
        }
        return python
    }

    /// After the bus itself restarted: a new control connection, then a new mock.
    public func restartOnNewBus() async throws {
        kill()
        control.close()
        control = try await bus.connect()
        try await start()
    }

    /// Starts (or restarts) the mock process; a new mock has no adapters.
    public func start() async throws {
        let template = repositoryRoot.appendingPathComponent("Tests/Fixtures/bluez5_nearplay.py").path
        // Its log is drained as it comes (a pipe nobody reads would stop the mock when full).
        let process = try SpawnedProcess(try Self.python(), ["-m", "dbusmock", "--system", "--template", template],
                                         environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], output: .null)
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while try await control.nameOwner(of: "org.bluez") == nil {
            guard process.isRunning else {
                _ = await process.finish()
                let output = process.standardError
                throw TestEnvironmentError(
                    "the BlueZ mock exited (\(output.suffix(600))); run scripts/bootstrap to install python-dbusmock")
            }
            guard Date() < deadline else { throw TestEnvironmentError("the BlueZ mock did not claim org.bluez in 20 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Kills the mock as a crash would (SIGKILL), and waits until org.bluez has no owner.
    public func kill() {
        guard let process else { return }
        process.kill()
        self.process = nil
    }

    public func call(_ member: String, _ body: [DBusValue] = [], path: DBusObjectPath = "/",
                     interface: String = BlueZMock.mockInterface) async throws -> [DBusValue] {
        try await control.call(destination: "org.bluez", path: path, interface: interface, member: member,
                               body: body, timeout: .seconds(10))
    }

    @discardableResult
    public func addAdapter(_ name: String = "hci0") async throws -> DBusObjectPath {
        let reply = try await call("AddAdapter", [.string(name), .string("nearplay-test")])
        return reply.first?.stringValue.flatMap(DBusObjectPath.init) ?? "/"
    }

    /// An adapter as the real bluetoothd shows it just after a restart: powered off and without
    /// LEAdvertisingManager1 until ``addAdvertisingManager(_:)``.
    @discardableResult
    public func addAdapterAsAfterRestart(_ name: String = "hci0") async throws -> DBusObjectPath {
        let reply = try await call("AddAdapterAsAfterRestart", [.string(name)])
        return reply.first?.stringValue.flatMap(DBusObjectPath.init) ?? "/"
    }

    /// Adds LEAdvertisingManager1 to an adapter that came without it.
    public func addAdvertisingManager(_ name: String = "hci0") async throws {
        _ = try await call("AddAdvertisingManager", [.string(name)])
    }

    public func removeAdapter(_ name: String = "hci0") async throws {
        _ = try await call("RemoveAdapterWithDevices", [.string(name)])
    }

    @discardableResult
    public func addDevice(_ address: String, adapter: String = "hci0") async throws -> DBusObjectPath {
        let reply = try await call("AddDevice", [.string(adapter), .string(address), .string("beacon")])
        return reply.first?.stringValue.flatMap(DBusObjectPath.init) ?? "/"
    }

    /// Sets properties of one interface of a mock object, emitting PropertiesChanged as bluetoothd does.
    public func update(_ path: DBusObjectPath, interface: String, _ properties: [(String, DBusValue)]) async throws {
        _ = try await call("UpdateProperties", [.string(interface), .stringVariantDictionary(properties)],
                           path: path, interface: "org.freedesktop.DBus.Mock")
    }

    /// A device's advertisement as bluetoothd reports it: RSSI and manufacturer data together.
    public func advertise(_ path: DBusObjectPath, rssi: Int16, manufacturerData: [UInt16: [UInt8]]) async throws {
        let data = DBusValue.dictionary(key: "q", value: "v", manufacturerData.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
        })
        try await update(path, interface: "org.bluez.Device1", [("RSSI", .int16(rssi)), ("ManufacturerData", data)])
    }

    public func setPowered(_ powered: Bool, adapter: String = "hci0") async throws {
        let path = DBusObjectPath("/org/bluez/\(adapter)") ?? "/"
        try await update(path, interface: "org.bluez.Adapter1", [("Powered", .boolean(powered))])
    }

    /// The properties of the advertisement registered on `adapter`, as the mock read them back from
    /// the registering connection, and that connection's name. Nil when none is registered.
    public func registeredAdvertisement(adapter: String = "hci0") async throws -> (sender: String, path: String, properties: [String: DBusValue])? {
        let reply = try await call("RegisteredAdvertisements", [.string(adapter)])
        guard let first = reply.first?.arrayValue?.first?.structureValue, first.count == 3,
              let sender = first[0].stringValue, let path = first[1].stringValue,
              let properties = first[2].stringKeyedValue
        else { return nil }
        return (sender, path, properties)
    }

    /// The registered advertisements the mock's controller is sending: a power-off drops them
    /// while bluetoothd keeps the registrations, as on the real stack.
    public func advertisementsOnAir(adapter: String = "hci0") async throws -> [String] {
        let reply = try await call("AdvertisementsOnAir", [.string(adapter)])
        return reply.first?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// One RegisterAdvertisement or UnregisterAdvertisement, as the mock logged it.
    public struct AdvertisingEvent: Sendable, Hashable {
        /// `register` or `unregister`.
        public var event: String
        /// What the advertisement goes out from, modelled on the kernel: a fresh non-resolvable
        /// private address per registration unless the adapter is connectable; empty for unregister.
        public var address: String
        public var path: String
        public var properties: [String: DBusValue]
    }

    /// Every registration and unregistration on `adapter`, in order.
    public func advertisingLog(adapter: String = "hci0") async throws -> [AdvertisingEvent] {
        let reply = try await call("AdvertisingLog", [.string(adapter)])
        return (reply.first?.arrayValue ?? []).compactMap { entry in
            guard let fields = entry.structureValue, fields.count == 4, let event = fields[0].stringValue,
                  let address = fields[1].stringValue, let path = fields[2].stringValue,
                  let properties = fields[3].stringKeyedValue
            else { return nil }
            return AdvertisingEvent(event: event, address: address, path: path, properties: properties)
        }
    }

    /// The adapter's mgmt Connectable setting, under which the kernel sends even a broadcast from
    /// the public address.
    public func setConnectable(_ connectable: Bool, adapter: String = "hci0") async throws {
        _ = try await call("SetConnectable", [.string(adapter), .boolean(connectable)])
    }

    public func setAdvertisingLimit(_ limit: UInt8, adapter: String = "hci0") async throws {
        _ = try await call("SetAdvertisingLimit", [.string(adapter), .byte(limit)])
    }

    /// Calls Release on every registered advertisement, as bluetoothd does when it drops them.
    public func releaseAdvertisements(adapter: String = "hci0") async throws {
        _ = try await call("ReleaseAdvertisements", [.string(adapter)])
    }

    /// Adapter1 properties as the mock holds them.
    public func adapterProperties(_ adapter: String = "hci0") async throws -> [String: DBusValue] {
        let path = DBusObjectPath("/org/bluez/\(adapter)") ?? "/"
        let reply = try await call("GetAll", [.string("org.bluez.Adapter1")], path: path,
                                   interface: "org.freedesktop.DBus.Properties")
        return reply.first?.stringKeyedValue ?? [:]
    }
}

extension BlueZMock {
    /// Replaces a method of a mock object with one that fails with `errorName`, as bluetoothd or
    /// the D-Bus policy would.
    public func makeFail(_ method: String, interface: String, path: DBusObjectPath, signature: String = "",
                         errorName: String, message: String) async throws {
        let code = "raise dbus.exceptions.DBusException(\(pythonString(message)), name=\(pythonString(errorName)))"
        _ = try await call("AddMethod", [.string(interface), .string(method), .string(signature), .string(""), .string(code)],
                           path: path, interface: "org.freedesktop.DBus.Mock")
    }

    private func pythonString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
