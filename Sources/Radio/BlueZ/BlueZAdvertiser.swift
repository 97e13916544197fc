import DBus
import Logging

/// Advertises through bluetoothd's LEAdvertisingManager1: the default ``Advertiser`` on Linux.
///
/// It serves an `org.bluez.LEAdvertisement1` object on its own bus connection and registers it.
/// bluetoothd reads the object's properties back over the bus. When bluetoothd restarts, the
/// adapter is switched off and on, or BlueZ releases the advertisement, it registers again; on
/// cancellation it unregisters.
public struct BlueZAdvertiser: Advertiser {
    /// `hci0` and so on; nil takes the first powered adapter.
    public var adapterName: String?
    public var logger: Logger
    /// The bus bluetoothd is on; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default).
    public var busAddress: String?
    /// Where the advertisement object is served on our connection.
    public static let objectPath: DBusObjectPath = "/org/nearplay/advertisement0"

    public init(adapterName: String? = nil, busAddress: String? = nil,
                logger: Logger = Logger(label: "nearplay.radio.bluez")) {
        self.adapterName = adapterName
        self.busAddress = busAddress
        self.logger = logger
    }

    public func advertise(_ payload: AdvertisingPayload) async throws {
        var backoff = Backoff()
        while !Task.isCancelled {
            do {
                let session = try await BlueZSession.open(address: busAddress)
                backoff.reset()
                var run = AdvertiseRun(advertiser: self, session: session, payload: payload)
                try await run.serve()
            } catch let error as RadioError {
                throw error
            } catch {
                if Task.isCancelled { return }
                logger.warning("Lost the system bus (\(error)); reconnecting in \(backoff.delay).")
            }
            do { try await backoff.wait() } catch { return }
        }
    }

    /// The LEAdvertisement1 properties for `payload` (BlueZ doc/org.bluez.LEAdvertisement.rst).
    /// Intervals are in milliseconds and only included where bluetoothd reads them.
    static func properties(for payload: AdvertisingPayload, withInterval: Bool) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [
            BlueZ.Property.type: .string("broadcast"),
            BlueZ.Property.manufacturerData: .dictionary(
                key: "q", value: "v",
                payload.manufacturerData.sorted { $0.key < $1.key }.map {
                    DBusDictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
                }),
        ]
        if withInterval {
            let milliseconds = UInt32(clamping: payload.interval.components.seconds * 1000
                + payload.interval.components.attoseconds / 1_000_000_000_000_000)
            properties[BlueZ.Property.minInterval] = .uint32(milliseconds)
            properties[BlueZ.Property.maxInterval] = .uint32(milliseconds)
        }
        return properties
    }
}

/// One bus connection's worth of advertising.
private struct AdvertiseRun {
    enum Event: Sendable {
        case signal(DBusMessage)
        case released
        case connectionLost(any Error)
    }

    let advertiser: BlueZAdvertiser
    let session: BlueZSession
    let payload: AdvertisingPayload
    var objects = BlueZObjects()
    var registeredOn: DBusObjectPath?
    var lastNotice = ""
    var said = Set<String>()

    var logger: Logger { advertiser.logger }

    init(advertiser: BlueZAdvertiser, session: BlueZSession, payload: AdvertisingPayload) {
        self.advertiser = advertiser
        self.session = session
        self.payload = payload
    }

    mutating func serve() async throws {
        defer { session.close() }
        let (events, input) = AsyncStream<Event>.makeStream()
        let forwarding = Task { [signals = session.signals] in
            do {
                for try await signal in signals { input.yield(.signal(signal)) }
                input.yield(.connectionLost(DBusError.disconnected()))
            } catch {
                input.yield(.connectionLost(error))
            }
        }
        defer { forwarding.cancel() }
        try await session.connection.export(advertisementObject(withInterval: false, events: input))
        objects = try await session.loadObjects()
        try await reconcile(events: input)
        for await event in events {
            switch event {
            case .connectionLost(let error):
                throw error
            case .released:
                logger.notice("BlueZ released the advertisement; registering it again when the adapter is ready.")
                registeredOn = nil
                try await reconcile(events: input)
            case .signal(let signal):
                try await handle(signal, events: input)
            }
        }
        // The stream only ends when the task is cancelled.
        await unregister()
    }

    private mutating func handle(_ signal: DBusMessage, events: AsyncStream<Event>.Continuation) async throws {
        switch objects.apply(signal) {
        case .ownerChanged(let owner):
            registeredOn = nil
            if owner == nil {
                notice("The Bluetooth service (bluetoothd) stopped; waiting for it to come back.")
            } else {
                objects = try await session.loadObjects()
                try await reconcile(events: events)
            }
        case .interfacesAdded(let path, let interfaces):
            if interfaces.contains(BlueZ.adapterInterface) || interfaces.contains(BlueZ.advertisingManagerInterface) {
                if !objects.has(path, interface: BlueZ.advertisingManagerInterface) {
                    await readAdvertisingManager(at: path)
                }
                try await reconcile(events: events)
            }
        case .interfacesRemoved(let path, let interfaces):
            if path == registeredOn,
               interfaces.contains(BlueZ.adapterInterface) || interfaces.contains(BlueZ.advertisingManagerInterface)
            {
                registeredOn = nil
                try await reconcile(events: events)
            }
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            if interface == BlueZ.adapterInterface,
               changed[BlueZ.Property.powered] != nil || invalidated.contains(BlueZ.Property.powered)
            {
                if path == registeredOn, objects.adapter(at: path)?.powered == false {
                    // bluetoothd keeps the registration over a power cycle; we only report it.
                    notice("Bluetooth adapter \(path.lastElement) was powered off; advertising resumes when it is back on.")
                }
                try await reconcile(events: events)
            }
        case .irrelevant:
            break
        }
    }

    /// Some bluetoothd builds (and the test mock) announce an adapter before, or without, its
    /// LEAdvertisingManager1; ask for it directly. An adapter that has none simply stays without.
    private mutating func readAdvertisingManager(at path: DBusObjectPath) async {
        guard let reply = try? await session.connection.call(
            destination: BlueZ.service, path: path, interface: BlueZ.propertiesInterface, member: BlueZ.Method.getAll,
            body: [.string(BlueZ.advertisingManagerInterface)], timeout: .seconds(5)),
            let properties = reply.first?.stringKeyedValue
        else { return }
        objects.set(path, interface: BlueZ.advertisingManagerInterface, properties: properties)
    }

    private mutating func reconcile(events: AsyncStream<Event>.Continuation) async throws {
        guard registeredOn == nil else { return }
        let candidates = objects.adapters.filter { $0.advertising != nil }
        guard let adapter = BlueZAdapter.choose(from: candidates, named: advertiser.adapterName),
              let capacity = adapter.advertising
        else {
            if let name = advertiser.adapterName, objects.adapters.contains(where: { $0.name == name }) {
                throw RadioError(.adapterUnusable,
                                 "Bluetooth adapter \(name) cannot advertise through BlueZ (no LEAdvertisingManager1); "
                                     + "it needs Bluetooth LE and BlueZ 5.43 or later.")
            }
            notice("No Bluetooth adapter that can advertise; waiting for one to appear.")
            return
        }
        guard adapter.powered else {
            notice("Bluetooth adapter \(adapter.name) is powered off: run `bluetoothctl power on`. Waiting for it.")
            return
        }
        if !capacity.controlsInterval, said.insert("interval").inserted {
            logger.notice("""
                BlueZ on \(adapter.name) does not take an advertising interval (it needs BlueZ 5.77, or bluetoothd \
                run with -E); advertising at the controller's default interval instead of \(payload.interval).
                """)
        }
        try await session.connection.export(advertisementObject(withInterval: capacity.controlsInterval, events: events))
        do {
            try await session.call(adapter.path, BlueZ.advertisingManagerInterface, BlueZ.Method.registerAdvertisement,
                                   [.objectPath(BlueZAdvertiser.objectPath), .stringVariantDictionary([])])
        } catch let error as DBusError {
            switch error.name {
            case BlueZ.Error.alreadyExists:
                break
            case BlueZ.Error.notPermitted:
                throw RadioError(.noFreeAdvertisingInstance, """
                    Bluetooth adapter \(adapter.name) has no free advertising instance (\(capacity.activeInstances) in \
                    use): stop another advertiser (`bluetoothctl advertise off`, other apps) or use another adapter.
                    """, cause: error)
            case BlueZ.Error.invalidArguments, BlueZ.Error.invalidLength, BlueZ.Error.notSupported:
                throw RadioError(.advertisementRejected,
                                 "Bluetooth adapter \(adapter.name) refused the advertisement: \(error.message).",
                                 cause: error)
            case BlueZ.Error.accessDenied:
                throw RadioError.accessDenied("advertise with Bluetooth adapter \(adapter.name)", cause: error)
            default:
                if error.isDisconnection { throw error }
                notice("Bluetooth adapter \(adapter.name) could not register the advertisement (\(error)); "
                    + "waiting for it to change.")
                return
            }
        }
        registeredOn = adapter.path
        notice("Advertising on Bluetooth adapter \(adapter.name) (\(adapter.address)).")
    }

    private func advertisementObject(withInterval: Bool, events: AsyncStream<Event>.Continuation) -> DBusExportedObject {
        DBusExportedObject(path: BlueZAdvertiser.objectPath, interfaces: [
            DBusExportedInterface(
                name: BlueZ.advertisementInterface,
                methods: [DBusExportedMethod(name: BlueZ.Method.release) { _ in
                    events.yield(.released)
                    return []
                }],
                properties: BlueZAdvertiser.properties(for: payload, withInterval: withInterval)),
        ])
    }

    private func unregister() async {
        guard let adapter = registeredOn else { return }
        let session = self.session
        // Run outside the cancelled task so the call is actually made.
        await Task {
            try? await session.call(adapter, BlueZ.advertisingManagerInterface, BlueZ.Method.unregisterAdvertisement,
                                    [.objectPath(BlueZAdvertiser.objectPath)], timeout: .seconds(2))
        }.value
        logger.notice("Stopped advertising on Bluetooth adapter \(adapter.lastElement).")
    }

    private mutating func notice(_ text: String) {
        guard text != lastNotice else { return }
        lastNotice = text
        logger.notice("\(text)")
    }
}
