import BeaconFrames

/// Turns sightings into enter, range and exit events, per beacon and receiver.
///
/// Pure: time comes from the sightings and from ``advance(to:into:)``, so replaying the same
/// sightings gives the same events. Exits are found through a min-heap of deadlines, so the
/// cost per sighting does not grow with the number of beacons tracked.
public struct ProximityTracker: Sendable {
    public let configuration: RangingConfiguration

    /// The state of one tracked beacon.
    public struct Track: Sendable {
        public let identity: BeaconIdentity
        public let receiver: String?
        public internal(set) var address: BluetoothAddress
        public internal(set) var firstSeen: Double
        public internal(set) var lastSeen: Double
        public internal(set) var lastRSSI: Int?
        public internal(set) var filteredRSSI: Double?
        public internal(set) var distance: Double?
        public internal(set) var zone: Zone = .unknown
        public internal(set) var meanGap: Double?
        public internal(set) var sightings = 0
        var filter: RSSIFilter
        var lastRangeEvent = -Double.infinity
        var timeout: Double
        var scheduled: Double
        var generation: UInt32

        /// Seconds of silence after which this beacon exits.
        public var exitTimeout: Double { timeout }
    }

    struct Key: Hashable, Sendable {
        var identity: BeaconIdentity
        var receiver: String?
    }

    private var slots: [Track?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    private var deadlines = DeadlineHeap()
    private var nextGeneration: UInt32 = 0

    /// Readings dropped as impossible (see ``RangingConfiguration/plausibleRSSI``).
    public private(set) var droppedReadings = 0

    public init(configuration: RangingConfiguration = RangingConfiguration()) {
        self.configuration = configuration
    }

    /// Beacons currently present.
    public var count: Int { index.count }

    /// The beacons currently present, in no particular order.
    public var tracks: [Track] { slots.compactMap { $0 } }

    /// Feeds one sighting. Appends to `events` any exits that fell due before it, then an enter
    /// for a new beacon and a range event when one is due.
    public mutating func observe(_ sighting: Sighting, into events: inout [ProximityEvent]) {
        advance(to: sighting.time, into: &events)
        let time = sighting.time
        let key = Key(identity: sighting.identity, receiver: sighting.receiver)

        var reading: Int?
        if let raw = sighting.rssi {
            let adjusted = Double(raw) + configuration.rssiOffset
            if RangingConfiguration.plausibleRSSI.contains(raw) {
                reading = Int(adjusted.rounded())
            } else {
                droppedReadings += 1
            }
        } else {
            droppedReadings += 1
        }

        let slot: Int
        if let existing = index[key] {
            slot = existing
            updateGap(slot: slot, time: time)
        } else {
            slot = insert(key: key, sighting: sighting, time: time)
            events.append(ProximityEvent(kind: .enter, time: time, identity: sighting.identity, address: sighting.address,
                                         receiver: sighting.receiver, rssi: reading))
        }

        guard var track = slots[slot] else { return }
        slots[slot] = nil  // keep the track uniquely referenced while it is mutated
        track.address = sighting.address
        track.lastSeen = max(track.lastSeen, time)
        track.sightings += 1
        track.timeout = configuration.presence.timeout(meanGap: track.meanGap)
        let deadline = track.lastSeen + track.timeout
        if deadline < track.scheduled {
            track.scheduled = deadline
            deadlines.push(.init(deadline: deadline, slot: slot, generation: track.generation))
        }
        if let reading {
            track.lastRSSI = reading
            let filtered = track.filter.update(Double(reading), at: time)
            track.filteredRSSI = filtered
            track.distance = sighting.measuredPower.flatMap {
                configuration.distanceModel.distance(rssi: filtered, measuredPower: Double($0))
            }
            track.zone = configuration.zones.next(from: track.zone, distance: track.distance)
            if time - track.lastRangeEvent >= configuration.rangeInterval {
                track.lastRangeEvent = time
                events.append(ProximityEvent(kind: .range, time: time, identity: track.identity, address: track.address,
                                             receiver: track.receiver, rssi: reading, filteredRSSI: filtered,
                                             distance: track.distance, zone: track.zone))
            }
        }
        slots[slot] = track
    }

    /// Moves time forward to `time`: appends an exit for every beacon whose silence passed its
    /// timeout before then, stamped with the moment it did.
    public mutating func advance(to time: Double, into events: inout [ProximityEvent]) {
        while let next = deadlines.first, next.deadline < time {
            _ = deadlines.popFirst()
            guard let track = slots[next.slot], track.generation == next.generation, track.scheduled == next.deadline else {
                continue
            }
            let actual = track.lastSeen + track.timeout
            if actual < time {
                remove(slot: next.slot)
                events.append(ProximityEvent(kind: .exit, time: actual, identity: track.identity, address: track.address,
                                             receiver: track.receiver))
            } else {
                slots[next.slot]?.scheduled = actual
                deadlines.push(.init(deadline: actual, slot: next.slot, generation: track.generation))
            }
        }
    }

    /// Ends the source: every beacon still present exits at its deadline.
    public mutating func finish(into events: inout [ProximityEvent]) {
        advance(to: .infinity, into: &events)
    }

    /// The current state of a beacon, if present.
    public func track(_ identity: BeaconIdentity, receiver: String? = nil) -> Track? {
        index[Key(identity: identity, receiver: receiver)].flatMap { slots[$0] }
    }

    private mutating func insert(key: Key, sighting: Sighting, time: Double) -> Int {
        nextGeneration &+= 1
        let track = Track(identity: key.identity, receiver: key.receiver, address: sighting.address, firstSeen: time,
                          lastSeen: time, filter: RSSIFilter(configuration.filter),
                          timeout: configuration.presence.initialTimeout, scheduled: .infinity, generation: nextGeneration)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = track
        } else {
            slot = slots.count
            slots.append(track)
        }
        index[key] = slot
        return slot
    }

    private mutating func updateGap(slot: Int, time: Double) {
        guard let track = slots[slot] else { return }
        let gap = max(0, time - track.lastSeen)
        guard gap <= track.timeout else { return }
        let smoothing = configuration.presence.gapSmoothing
        slots[slot]?.meanGap = track.meanGap.map { $0 + smoothing * (gap - $0) } ?? gap
    }

    private mutating func remove(slot: Int) {
        guard let track = slots[slot] else { return }
        index[Key(identity: track.identity, receiver: track.receiver)] = nil
        slots[slot] = nil
        freeSlots.append(slot)
    }
}
