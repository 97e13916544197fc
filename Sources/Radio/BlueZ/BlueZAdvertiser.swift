import DBus
import Logging
import SystemSupport

/// Advertises through bluetoothd's LEAdvertisingManager1: the default ``Advertiser`` on Linux.
///
/// It serves an `org.bluez.LEAdvertisement1` object on its manager's bus connection and registers
/// it. bluetoothd reads the object's properties back over the bus. When bluetoothd restarts, the
/// adapter is switched off and on, the connection is lost and regained, or BlueZ releases the
/// advertisement, it registers again; on cancellation it unregisters.
public struct BlueZAdvertiser: Advertiser {
    /// The BlueZ connection this advertiser uses, perhaps shared with a scanner.
    public let manager: BlueZManager
    /// `hci0` and so on; nil takes the first powered adapter.
    public var adapterName: String?
    public var logger: Logger
    /// How long the named adapter may lack LEAdvertisingManager1 before the advertiser says it
    /// cannot advertise. bluetoothd adds Adapter1 first and LEAdvertisingManager1 only once the
    /// kernel told it the controller's advertising features. Once the advertisement has been
    /// registered, a missing manager (a restart, the controller re-added) is waited for without
    /// limit.
    public var advertisingManagerGrace: Duration = .seconds(10)
    /// The bus bluetoothd is on; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default).
    public var busAddress: String? { manager.busAddress }
    /// Where the advertisement object is served: the first advertiser on a manager uses this
    /// path, others on the same manager `/org/nearplay/advertisement1` and so on.
    public static let objectPath: DBusObjectPath = "/org/nearplay/advertisement0"

    /// An advertiser on `manager`'s connection, which it shares with whatever else uses the manager.
    public init(manager: BlueZManager, adapterName: String? = nil, logger: Logger? = nil) {
        self.manager = manager
        self.adapterName = adapterName
        self.logger = logger ?? manager.logger
    }

    /// An advertiser with a connection of its own (a ``BlueZManager`` nothing else uses).
    public init(adapterName: String? = nil, busAddress: String? = nil,
                logger: Logger = Logger(label: "nearplay.radio.bluez")) {
        self.init(manager: BlueZManager(busAddress: busAddress, logger: logger), adapterName: adapterName, logger: logger)
    }

    public func advertise(_ payload: AdvertisingPayload) async throws {
        try await advertise(payload, then: nil)
    }

    /// Each new payload replaces the one before by unregistering the advertisement and
    /// registering it again with the new properties, on the same connection and object path.
    ///
    /// BlueZ chooses the address, not us. What it does, read in BlueZ 5.66 (src/advertising.c)
    /// and Linux 6.1 (net/bluetooth/hci_sync.c), and seen on the real stack (scripts/test-real-stack,
    /// checks `bluez-rotating-identities` and `bluez-rotating-identities-connectable`):
    /// - bluetoothd asks the kernel for a "broadcast" advertisement without
    ///   MGMT_ADV_FLAG_CONNECTABLE. The kernel makes the instance connectable anyway when the
    ///   adapter's mgmt Connectable setting is on (`mgmt_get_connectable`).
    /// - Not connectable and privacy off (bluetoothd's default): `hci_get_random_address` with
    ///   `require_privacy` draws a fresh non-resolvable private address (top bits 00) each time
    ///   the kernel sets an instance up, sent with LE Set Advertising Set Random Address (extended
    ///   controllers) or LE Set Random Address (legacy ones). Unregistering removes the instance
    ///   (MGMT Remove Advertising: the set disabled and removed); registering adds a new one, its
    ///   data and new address set before it is enabled. So address and identity change together,
    ///   with a short silence between: what this method needs.
    /// - Connectable adapter, privacy off: the public address for every period. The identity
    ///   rotates, the address does not, and the periods can be linked.
    /// - Privacy on (`Privacy = device` in main.conf): a resolvable private address from the
    ///   adapter's IRK instead; as the source reads, a new instance gets a new one. Not tried on
    ///   the real stack.
    /// Changing the registered object's properties in place instead would keep the instance; on
    /// legacy controllers the kernel then writes the new data before it renews the address.
    public func advertise(rotating payloads: AsyncStream<AdvertisingPayload>) async throws {
        try await advertise(nil, then: payloads)
    }

    private func advertise(_ payload: AdvertisingPayload?, then payloads: AsyncStream<AdvertisingPayload>?) async throws {
        let path = await manager.claimAdvertisementPath()
        let user = await manager.subscribe(followingDevices: false)
        var run = AdvertiseRun(advertiser: self, payload: payload, path: path)
        var failure: (any Error)?
        do {
            try await run.serve(user, payloads: payloads)
        } catch where Task.isCancelled {
            // A call cut short by the cancellation: winding down, not a failure.
        } catch {
            failure = error
        }
        await run.withdraw()
        await manager.unsubscribe(user)
        await manager.releaseAdvertisementPath(path)
        if let failure { throw RadioError.wrapping(failure, busAddress: manager.busAddress) }
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
            let milliseconds = UInt32(clamping: payload.interval.wholeMilliseconds)
            properties[BlueZ.Property.minInterval] = .uint32(milliseconds)
            properties[BlueZ.Property.maxInterval] = .uint32(milliseconds)
        }
        return properties
    }
}

/// One advertisement's state, kept across the manager's reconnections.
private struct AdvertiseRun {
    enum Input: Sendable {
        case bluez(BlueZManager.Event)
        case released
        /// Time to look again whether the named adapter has gained LEAdvertisingManager1.
        case recheck
        /// A rotating identity's next payload.
        case payload(AdvertisingPayload)
    }

    let advertiser: BlueZAdvertiser
    /// What to advertise; nil until a rotating advertiser's first payload.
    var payload: AdvertisingPayload?
    let path: DBusObjectPath
    /// The connection to make calls on, while there is one.
    var session: BlueZSession?
    var registeredOn: DBusObjectPath?
    var lastNotice = ""
    var said = Set<String>()
    /// Since when the named adapter has been seen without LEAdvertisingManager1.
    var withoutManagerSince: ContinuousClock.Instant?
    /// The timer that says when the grace is over; cancelled with the run.
    var recheck: Task<Void, Never>?
    /// Whether bluetoothd has taken the advertisement once in this run: the adapter can
    /// advertise, so a missing LEAdvertisingManager1 later (a restart, the controller
    /// re-added) is waited for however long it takes.
    var registeredOnce = false
    /// Whether payloads rotate (``BlueZAdvertiser/advertise(rotating:)``).
    var rotatingIdentities = false

    var logger: Logger { advertiser.logger }
    var manager: BlueZManager { advertiser.manager }

    init(advertiser: BlueZAdvertiser, payload: AdvertisingPayload?, path: DBusObjectPath) {
        self.advertiser = advertiser
        self.payload = payload
        self.path = path
    }

    /// Runs until the task is cancelled (returns) or something waiting cannot fix (throws);
    /// `payloads`, when given, replace the payload one after the other.
    mutating func serve(_ user: UInt64, payloads: AsyncStream<AdvertisingPayload>?) async throws {
        let (inputs, input) = AsyncStream<Input>.makeStream()
        rotatingIdentities = payloads != nil
        defer { recheck?.cancel() }
        // BlueZ's events, Release and new payloads, in one stream. The forwarder reads the bus for
        // everyone when no other user of the manager is reading it; it and the payloads' feeder
        // are children of this run, cancelled with it and over when it returns.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [manager] in
                while let events = try? await manager.events(for: user) {
                    for event in events { input.yield(.bluez(event)) }
                }
                input.finish()
            }
            if let payloads {
                group.addTask {
                    for await payload in payloads { input.yield(.payload(payload)) }
                }
            }
            try await consume(inputs, input)
            group.cancelAll()
        }
    }

    private mutating func consume(_ inputs: AsyncStream<Input>, _ input: AsyncStream<Input>.Continuation) async throws {
        for await item in inputs {
            switch item {
            case .payload(let next):
                guard next != payload else { continue }
                try await rotate(to: next, events: input)
            case .released:
                logger.notice("BlueZ released the advertisement; registering it again when the adapter is ready.")
                registeredOn = nil
                try await reconcile(events: input)
            case .recheck:
                try await reconcile(events: input)
            case .bluez(.ready(let session, _)):
                self.session = session
                registeredOn = nil
                try await reconcile(events: input)
            case .bluez(.serviceStopped):
                registeredOn = nil
                withoutManagerSince = nil
                notice("The Bluetooth service (bluetoothd) stopped; waiting for it to come back.")
            case .bluez(.disconnected):
                session = nil
                registeredOn = nil
            case .bluez(.changes(let changes)):
                for change in changes { try await handle(change, events: input) }
            }
        }
    }

    private mutating func handle(_ change: BlueZObjects.Change, events: AsyncStream<Input>.Continuation) async throws {
        switch change {
        case .interfacesAdded(_, let interfaces, _):
            if interfaces.contains(BlueZ.adapterInterface) || interfaces.contains(BlueZ.advertisingManagerInterface) {
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
                if path == registeredOn, await manager.adapter(at: path)?.powered == false {
                    // Powering off makes the kernel drop the advertising instance (MGMT Advertising
                    // Removed), yet bluetoothd 5.66 keeps the registration and does not add it
                    // again at power-on (seen on the real stack): unregister now, register again
                    // when the adapter is back on.
                    notice("Bluetooth adapter \(path.lastElement) was powered off; advertising resumes when it is back on.")
                    if let session {
                        try? await session.call(path, BlueZ.advertisingManagerInterface, BlueZ.Method.unregisterAdvertisement,
                                                [.objectPath(self.path)], timeout: .seconds(2))
                    }
                    registeredOn = nil
                }
                try await reconcile(events: events)
            }
        case .ownerChanged, .irrelevant:
            // The manager turns owner changes into `serviceStopped` and `ready`.
            break
        }
    }

    /// Unregisters the advertisement (bluetoothd removes its instance, the controller stops
    /// sending it) and registers it again with `next`'s properties: the kernel sets the new
    /// instance up from a new address (see ``BlueZAdvertiser/advertise(rotating:)``).
    private mutating func rotate(to next: AdvertisingPayload, events: AsyncStream<Input>.Continuation) async throws {
        payload = next
        guard let adapter = registeredOn, let session else {
            // Not on the air now: it registers with the new payload when it can.
            try await reconcile(events: events)
            return
        }
        do {
            try await session.call(adapter, BlueZ.advertisingManagerInterface, BlueZ.Method.unregisterAdvertisement,
                                   [.objectPath(path)], timeout: .seconds(2))
        } catch let error as DBusError where error.isDisconnection {
            // The manager reconnects and says when it is ready again.
            return
        } catch {
            // Gone already (BlueZ dropped it): registering is all there is to do.
            logger.debug("Unregistering the advertisement before the new identity failed: \(error).")
        }
        registeredOn = nil
        try await reconcile(events: events, rotating: true)
    }

    private mutating func reconcile(events: AsyncStream<Input>.Continuation, rotating: Bool = false) async throws {
        guard registeredOn == nil, let session, let payload else { return }
        guard let adapter = await manager.chooseAdapter(named: advertiser.adapterName, advertising: true),
              let capacity = adapter.advertising
        else {
            if let name = advertiser.adapterName, await manager.adapters.contains(where: { $0.name == name }) {
                // After a restart bluetoothd shows the adapter before its advertising manager:
                // wait a while before calling it final.
                let now = ContinuousClock.now
                let since = withoutManagerSince ?? now
                if registeredOnce {
                    notice("Bluetooth adapter \(name) has no LEAdvertisingManager1 yet; waiting for bluetoothd to add it.")
                    return
                }
                if withoutManagerSince == nil {
                    withoutManagerSince = now
                    let grace = advertiser.advertisingManagerGrace
                    recheck?.cancel()
                    recheck = Task {
                        guard (try? await Task.sleep(for: grace)) != nil else { return }
                        events.yield(.recheck)
                    }
                }
                guard since.duration(to: now) >= advertiser.advertisingManagerGrace else {
                    notice("Bluetooth adapter \(name) has no LEAdvertisingManager1 yet; waiting for bluetoothd to add it.")
                    return
                }
                throw RadioError(.adapterUnusable,
                                 "Bluetooth adapter \(name) cannot advertise through BlueZ (no LEAdvertisingManager1 after "
                                     + "\(advertiser.advertisingManagerGrace.components.seconds) s); it needs Bluetooth LE and BlueZ 5.43 or later.")
            }
            // The grace starts again when the adapter comes back.
            withoutManagerSince = nil
            notice("No Bluetooth adapter that can advertise; waiting for one to appear.")
            return
        }
        withoutManagerSince = nil
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
        do {
            // On a rotation the object is replaced in place: no PropertiesChanged (bluetoothd would
            // refresh the old registration) and no InterfacesRemoved (it would drop the new one).
            try await session.connection.export(advertisementObject(payload, withInterval: capacity.controlsInterval, events: events))
            try await session.call(adapter.path, BlueZ.advertisingManagerInterface, BlueZ.Method.registerAdvertisement,
                                   [.objectPath(path), .stringVariantDictionary([])])
        } catch let error as DBusError {
            switch error.name {
            case BlueZ.ErrorName.alreadyExists:
                break
            case BlueZ.ErrorName.notPermitted:
                throw RadioError(.noFreeAdvertisingInstance, """
                    Bluetooth adapter \(adapter.name) has no free advertising instance (\(capacity.activeInstances) in \
                    use): stop another advertiser (`bluetoothctl advertise off`, other apps) or use another adapter.
                    """, cause: error)
            case BlueZ.ErrorName.invalidArguments, BlueZ.ErrorName.invalidLength, BlueZ.ErrorName.notSupported:
                throw RadioError(.advertisementRejected,
                                 "Bluetooth adapter \(adapter.name) refused the advertisement: \(error.message).",
                                 cause: error)
            case BlueZ.ErrorName.accessDenied:
                throw RadioError.accessDenied("advertise with Bluetooth adapter \(adapter.name)", cause: error)
            default:
                // The manager reconnects and says when it is ready again.
                if error.isDisconnection { return }
                notice("Bluetooth adapter \(adapter.name) could not register the advertisement (\(error)); "
                    + "waiting for it to change.")
                return
            }
        }
        registeredOn = adapter.path
        registeredOnce = true
        if rotatingIdentities, adapter.advertisesFromPublicAddress, said.insert("public address").inserted {
            logger.warning("""
                Bluetooth adapter \(adapter.name) is \(adapter.discoverable ? "discoverable" : "connectable"), so the kernel advertises \
                from its public address \(adapter.address): the identity rotates but the address does not, and anyone can link \
                one period to the next. Run `bluetoothctl discoverable off` (and keep the adapter not connectable), or use the \
                hci backend.
                """)
        }
        if rotating {
            logger.info("Advertising a new identity on Bluetooth adapter \(adapter.name).")
        } else {
            notice("Advertising on Bluetooth adapter \(adapter.name) (\(adapter.address)).")
        }
    }

    private func advertisementObject(_ payload: AdvertisingPayload, withInterval: Bool,
                                     events: AsyncStream<Input>.Continuation) -> DBusExportedObject {
        DBusExportedObject(path: path, interfaces: [
            DBusExportedInterface(
                name: BlueZ.advertisementInterface,
                methods: [DBusExportedMethod(name: BlueZ.Method.release) { _ in
                    events.yield(.released)
                    return []
                }],
                properties: BlueZAdvertiser.properties(for: payload, withInterval: withInterval)),
        ])
    }

    /// Unregisters the advertisement and stops serving it, so the connection is left as found.
    func withdraw() async {
        guard let session else { return }
        let (adapter, path) = (registeredOn, self.path)
        // Run outside the cancelled task so the calls are actually made.
        await Task {
            if let adapter {
                try? await session.call(adapter, BlueZ.advertisingManagerInterface, BlueZ.Method.unregisterAdvertisement,
                                        [.objectPath(path)], timeout: .seconds(2))
            }
            try? await session.connection.unexport(path)
        }.value
        if let adapter { logger.notice("Stopped advertising on Bluetooth adapter \(adapter.lastElement).") }
    }

    private mutating func notice(_ text: String) {
        guard text != lastNotice else { return }
        lastNotice = text
        logger.notice("\(text)")
    }
}
