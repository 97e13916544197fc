import BeaconFrames

/// Turns sightings into enter, range and exit events, per beacon and receiver.
///
/// Pure: time comes from the sightings and from ``advance(to:into:)``, so replaying the same
/// sightings gives the same events. Exits are found through a min-heap of deadlines, so the
/// cost per sighting does not grow with the number of beacons tracked.
public struct ProximityTracker: Sendable {
    public private(set) var configuration: RangingConfiguration

    /// The state of one tracked beacon.
    public struct Track: Sendable {
        public let identity: BeaconIdentity
        public let receiver: Receiver?
        public internal(set) var address: BluetoothAddress
        public internal(set) var firstSeen: Double
        public internal(set) var lastSeen: Double
        public internal(set) var lastRSSI: Int?
        public internal(set) var filteredRSSI: Double?
        /// Metres, as of the last range event (computed only when one is written).
        public internal(set) var distance: Double?
        /// The zone reported: the followed zone once a change has held for the zones' dwell.
        public internal(set) var zone: Zone = .unknown
        /// The zone after hysteresis, followed at every reading.
        public internal(set) var followedZone: Zone = .unknown
        var zoneDwell = ZoneDwell()
        /// The measured power the zone thresholds were computed for, and the thresholds.
        var thresholdsPower: Int?
        var thresholds: ZoneThresholds?
        var gaps: GapStatistics
        public internal(set) var sightings = 0
        /// Range: the interval meant to hold the true distance about 68 % of the time (metres).
        public internal(set) var distanceInterval: ClosedRange<Double>?
        /// Running mean of the squared difference between a reading and the filtered RSSI (dB²):
        /// the spread the filter sees, which sets the filter's share of the interval.
        public internal(set) var readingVariance = RangingUncertainty.initialReadingVariance
        var filter: RSSIFilter
        var lastRangeEvent = -Double.infinity
        var timeout: Double
        var scheduled: Double
        var generation: UInt32
        var isActive = true

        /// Seconds of silence after which this beacon exits.
        public var exitTimeout: Double { timeout }
        /// The measured power of the last sighting that carried one (dBm).
        public var measuredPower: Int? { thresholdsPower }
        /// The RSSI filter's estimate variance (dB²) given the readings' observed spread.
        public var filterVariance: Double { filter.estimateVariance(readingVariance: readingVariance) }
        /// The running mean gap between sightings (s); nil before the second sighting.
        public var meanGap: Double? { gaps.meanGap }
        /// The advertising interval this beacon appears to have (s): its typical one-packet gap.
        public var advertisingInterval: Double? { gaps.interval }
        /// The fraction of this beacon's packets that appear to be lost.
        public var packetLoss: Double { gaps.loss }

        /// Takes one sighting into the track's state. Returns a new exit deadline to schedule
        /// when it moved earlier than the one scheduled, and whether a range event is due.
        mutating func record(_ sighting: Sighting, reading: Int?, configuration: RangingConfiguration)
            -> (newDeadline: Double?, rangeDue: Bool) {
            let time = sighting.time
            if sightings > 0 {
                // Gaps longer than the timeout in force (the beacon left and came back) are not intervals.
                let gap = max(0, time - lastSeen)
                if gap <= timeout { gaps.add(gap: gap, configuration: configuration.presence) }
            }
            address = sighting.address
            if time > lastSeen { lastSeen = time }
            sightings += 1
            // The timeout takes two logarithms; the loss and interval it rests on move slowly, so
            // it is worked out afresh for a beacon's first 16 sightings and every 8th after.
            if sightings <= 16 || sightings & 7 == 0 {
                timeout = configuration.presence.timeout(interval: gaps.interval, loss: gaps.loss)
            }
            var newDeadline: Double?
            let deadline = lastSeen + timeout
            if deadline < scheduled {
                scheduled = deadline
                newDeadline = deadline
            }
            guard let reading else { return (newDeadline, false) }
            lastRSSI = reading
            let filtered = filter.update(Double(reading), at: time)
            filteredRSSI = filtered
            let residual = Double(reading) - filtered
            readingVariance += RangingUncertainty.spreadSmoothing * (residual * residual - readingVariance)
            // Zones are followed on the filtered RSSI against thresholds computed once per measured
            // power; the distance itself (an exp) only when a range event is written.
            if sighting.measuredPower != thresholdsPower {
                thresholdsPower = sighting.measuredPower
                thresholds = sighting.measuredPower.flatMap {
                    configuration.zones.thresholds(model: configuration.distanceModel, measuredPower: Double($0))
                }
            }
            followedZone = thresholds.map { configuration.zones.next(from: followedZone, rssi: filtered, thresholds: $0) } ?? .unknown
            zone = zoneDwell.reported(zone, followed: followedZone, at: time, dwell: configuration.zones.dwell)
            guard time - lastRangeEvent >= configuration.rangeInterval else { return (newDeadline, false) }
            lastRangeEvent = time
            if let power = sighting.measuredPower.map(Double.init),
               let metres = configuration.distanceModel.distance(rssi: filtered, measuredPower: power) {
                distance = metres
                let filterVariance = filter.estimateVariance(readingVariance: readingVariance)
                if let fitted = configuration.uncertainty.fitted {
                    let sides = fitted.sides(pathLoss: power - filtered, filterVariance: filterVariance, readings: sightings)
                    distanceInterval = configuration.distanceModel.interval(
                        rssi: filtered, measuredPower: power, nearer: sides.nearer, farther: sides.farther)
                } else {
                    let spread = configuration.uncertainty.spread(
                        rssi: filtered, measuredPower: power, model: configuration.distanceModel, filterVariance: filterVariance)
                    distanceInterval = configuration.distanceModel.interval(rssi: filtered, measuredPower: power, spread: spread)
                }
            } else {
                distance = nil
                distanceInterval = nil
            }
            return (newDeadline, true)
        }
    }

    /// Tracks by slot; a slot whose track exited is inactive until reused.
    private var slots: [Track] = []
    private var freeSlots: [Int] = []
    private var index = TrackIndex()
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
    public var tracks: [Track] { slots.filter(\.isActive) }

    /// Feeds one sighting. Appends to `events` any exits that fell due before it, then an enter
    /// for a new beacon and a range event when one is due.
    public mutating func observe(_ sighting: Sighting, into events: inout [ProximityEvent]) {
        let time = sighting.time
        if let next = deadlines.first, next.deadline < time { advance(to: time, into: &events) }

        var reading: Int?
        if let raw = sighting.rssi, RangingConfiguration.plausibleRSSI.contains(raw) {
            let offset = configuration.offset(for: sighting.receiver)
            reading = offset == 0 ? raw : Int((Double(raw) + offset).rounded())
        } else {
            droppedReadings += 1
        }

        let hash = TrackIndex.hash(sighting.identity.hashWord, receiver: sighting.receiver)
        let slot: Int
        if let existing = index.find(hash, matches: { slots[$0].identity == sighting.identity && slots[$0].receiver == sighting.receiver }) {
            slot = existing
        } else {
            slot = insert(hash: hash, sighting: sighting, time: time)
            events.append(ProximityEvent(kind: .enter, time: time, identity: sighting.identity, address: sighting.address,
                                         receiver: sighting.receiver, rssi: reading))
        }
        // Mutate the track in place: no copy of its state per sighting.
        let outcome = slots[slot].record(sighting, reading: reading, configuration: configuration)
        if let deadline = outcome.newDeadline {
            deadlines.push(.init(deadline: deadline, slot: slot, generation: slots[slot].generation))
        }
        if outcome.rangeDue {
            events.append(ProximityEvent(kind: .range, time: time, identity: sighting.identity, address: sighting.address,
                                         receiver: sighting.receiver, rssi: reading, filteredRSSI: slots[slot].filteredRSSI,
                                         distance: slots[slot].distance, distanceInterval: slots[slot].distanceInterval,
                                         zone: slots[slot].zone, measuredPower: sighting.measuredPower,
                                         filterVariance: slots[slot].filterVariance))
        }
    }

    /// Moves time forward to `time`: appends an exit for every beacon whose silence passed its
    /// timeout before then, stamped with the moment it did.
    public mutating func advance(to time: Double, into events: inout [ProximityEvent]) {
        while let next = deadlines.first, next.deadline < time {
            // The track's fields are read in place: a copy of the whole track per deadline costs
            // more than the check.
            let slot = next.slot
            guard slots[slot].isActive, slots[slot].generation == next.generation, slots[slot].scheduled == next.deadline else {
                _ = deadlines.popFirst()
                continue
            }
            let actual = slots[slot].lastSeen + slots[slot].timeout
            // Exit only at the deadline this entry stood for; a later one goes back on the heap
            // (in the same pass as taking this one off), so exits of other beacons due before it
            // come out first.
            if actual <= next.deadline {
                _ = deadlines.popFirst()
                let (identity, address, receiver) = (slots[slot].identity, slots[slot].address, slots[slot].receiver)
                remove(slot: slot)
                events.append(ProximityEvent(kind: .exit, time: actual, identity: identity, address: address, receiver: receiver))
            } else {
                slots[slot].scheduled = actual
                deadlines.replaceFirst(with: .init(deadline: actual, slot: slot, generation: next.generation))
            }
        }
    }

    /// Ranges with `model` from now on (an agent at a location whose site profile says how fast
    /// RSSI falls there). Every track keeps its filtered RSSI and presence; its zone thresholds
    /// are worked out again for the new model and its zone is what the new model says of its
    /// filtered RSSI, without hysteresis (which absorbs noise, not a change of model), so a
    /// beacon's zone never depends on which models came before. Its distance follows at its next
    /// range event.
    public mutating func setDistanceModel(_ model: DistanceModel) {
        guard model != configuration.distanceModel else { return }
        configuration.distanceModel = model
        for slot in slots.indices where slots[slot].isActive {
            let thresholds = slots[slot].thresholdsPower.flatMap {
                configuration.zones.thresholds(model: model, measuredPower: Double($0))
            }
            slots[slot].thresholds = thresholds
            if let thresholds, let filtered = slots[slot].filteredRSSI {
                slots[slot].followedZone = configuration.zones.next(from: .unknown, rssi: filtered, thresholds: thresholds)
            } else {
                slots[slot].followedZone = .unknown
            }
            slots[slot].zone = slots[slot].followedZone
            slots[slot].zoneDwell = ZoneDwell()
        }
    }

    /// Ends the source: every beacon still present exits at its deadline.
    public mutating func finish(into events: inout [ProximityEvent]) {
        advance(to: .infinity, into: &events)
    }

    /// The current state of a beacon, if present.
    public func track(_ identity: BeaconIdentity, receiver: Receiver? = nil) -> Track? {
        index.find(TrackIndex.hash(identity.hashWord, receiver: receiver)) {
            slots[$0].identity == identity && slots[$0].receiver == receiver
        }.map { slots[$0] }
    }

    private mutating func insert(hash: UInt64, sighting: Sighting, time: Double) -> Int {
        nextGeneration &+= 1
        let track = Track(identity: sighting.identity, receiver: sighting.receiver, address: sighting.address, firstSeen: time,
                          lastSeen: time, gaps: GapStatistics(initialLoss: configuration.presence.initialLoss),
                          filter: RSSIFilter(configuration.filter),
                          timeout: configuration.presence.initialTimeout, scheduled: .infinity, generation: nextGeneration)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = track
        } else {
            slot = slots.count
            slots.append(track)
        }
        index.insert(hash, slot: slot)
        return slot
    }

    private mutating func remove(slot: Int) {
        let track = slots[slot]
        guard track.isActive else { return }
        index.remove(TrackIndex.hash(track.identity.hashWord, receiver: track.receiver), slot: slot)
        slots[slot].isActive = false
        slots[slot].filter = RSSIFilter(configuration.filter)  // let go of a trimmed mean's window
        freeSlots.append(slot)
    }
}
