@testable import Ranging
import Testing

/// The tracker's hash table against a plain dictionary, through many inserts and removals that
/// force collisions, wrap-around and backward shifts.
@Suite struct TrackIndexTests {
    @Test func agreesWithADictionaryThroughInsertsAndRemovals() {
        var index = TrackIndex(capacity: 4)
        var reference: [Int: UInt64] = [:]  // slot → hash
        var state: UInt64 = 1
        func random() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 17
        }
        for step in 0..<50_000 {
            if reference.count < 300, random() % 3 != 0 {
                let slot = step
                // Few distinct hash values, so runs collide and wrap.
                let hash = (random() % 64) << 1 | 1
                index.insert(hash, slot: slot)
                reference[slot] = hash
            } else if !reference.isEmpty {
                // A seeded choice, so a failure reproduces.
                let keys = reference.keys.sorted()
                let slot = keys[Int(random() % UInt64(keys.count))]
                let hash = reference[slot]!
                index.remove(hash, slot: slot)
                reference[slot] = nil
            }
            if step % 97 == 0 {
                for (slot, hash) in reference {
                    #expect(index.find(hash, matches: { $0 == slot }) == slot)
                }
                #expect(index.count == reference.count)
            }
        }
        for (slot, hash) in reference { index.remove(hash, slot: slot) }
        #expect(index.count == 0)
        #expect(index.find(3, matches: { _ in true }) == nil)
    }
}
