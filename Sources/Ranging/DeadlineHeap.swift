/// A binary min-heap of (deadline, slot, generation) entries: the next beacon to check for exit.
struct DeadlineHeap {
    struct Entry {
        var deadline: Double
        var slot: Int
        var generation: UInt32
    }

    private(set) var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var first: Entry? { entries.first }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        entries.withUnsafeMutableBufferPointer { e in
            var child = e.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard entry.deadline < e[parent].deadline else { break }
                e[child] = e[parent]
                child = parent
            }
            e[child] = entry
        }
    }

    mutating func popFirst() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown()
        }
        return top
    }

    /// Replaces the first entry with `entry`: a pop and a push in one pass down the heap, for a
    /// beacon whose deadline came round while it was still being heard (the common case).
    mutating func replaceFirst(with entry: Entry) {
        guard !entries.isEmpty else { return push(entry) }
        entries[0] = entry
        siftDown()
    }

    /// Moves the first entry down to its place, filling the holes it leaves rather than swapping.
    private mutating func siftDown() {
        entries.withUnsafeMutableBufferPointer { e in
            let count = e.count
            let moving = e[0]
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < count else { break }
                var child = left
                if left + 1 < count, e[left + 1].deadline < e[left].deadline { child = left + 1 }
                guard e[child].deadline < moving.deadline else { break }
                e[parent] = e[child]
                parent = child
            }
            e[parent] = moving
        }
    }
}
