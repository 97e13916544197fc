import BeaconFrames

/// An open-addressing hash table (linear probing, backward-shift deletion) from a beacon's
/// identity and receiver to its slot in the tracker.
///
/// The tracker looks a beacon up at every sighting; this table hashes an identity with one
/// multiply-xor mix of ``BeaconFrames/BeaconIdentity/hashWord`` instead of SipHash and stores
/// only the hash and the slot, confirming a match against the slot's track.
struct TrackIndex {
    /// Per bucket: the full hash with its lowest bit set (0 marks an empty bucket).
    private var hashes: [UInt64]
    private var slots: [Int32]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        hashes = Array(repeating: 0, count: size)
        slots = Array(repeating: -1, count: size)
        mask = size - 1
    }

    /// Murmur3's finaliser on the identity word, then the receiver's hash when there is one.
    @inline(__always)
    static func hash(_ word: UInt64, receiver: Receiver?) -> UInt64 {
        var h = word
        if let receiver { h ^= (UInt64(receiver.id) &+ 1) &* 0x9E37_79B9_7F4A_7C15 }
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h | 1
    }

    /// The slot whose track `matches`, probing from the hash's bucket.
    @inline(__always)
    func find(_ hash: UInt64, matches: (Int) -> Bool) -> Int? {
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = hashes[bucket]
            if stored == 0 { return nil }
            if stored == hash, matches(Int(slots[bucket])) { return Int(slots[bucket]) }
            bucket = (bucket + 1) & mask
        }
    }

    mutating func insert(_ hash: UInt64, slot: Int) {
        if (count + 1) * 2 > hashes.count { grow() }
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while hashes[bucket] != 0 { bucket = (bucket + 1) & mask }
        hashes[bucket] = hash
        slots[bucket] = Int32(slot)
        count += 1
    }

    /// Removes the entry for `slot`, shifting later entries of the probe run back so lookups
    /// never need tombstones.
    mutating func remove(_ hash: UInt64, slot: Int) {
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while hashes[bucket] != 0, !(hashes[bucket] == hash && slots[bucket] == Int32(slot)) {
            bucket = (bucket + 1) & mask
        }
        guard hashes[bucket] != 0 else { return }
        var hole = bucket
        var next = (hole + 1) & mask
        while hashes[next] != 0 {
            let home = Int(truncatingIfNeeded: hashes[next]) & mask
            // Move the entry back if its home is not within (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext {
                hashes[hole] = hashes[next]
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        hashes[hole] = 0
        slots[hole] = -1
        count -= 1
    }

    private mutating func grow() {
        let oldHashes = hashes, oldSlots = slots
        let size = hashes.count * 2
        hashes = Array(repeating: 0, count: size)
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        count = 0
        for (hash, slot) in zip(oldHashes, oldSlots) where hash != 0 { insert(hash, slot: Int(slot)) }
    }
}
