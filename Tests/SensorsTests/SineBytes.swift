import Foundation

/// Headerless S16_LE bytes of a sine.
func sineBytes(frequency: Double, amplitude: Double, sampleRate: Int = 16_000, seconds: Double) -> [UInt8] {
    let count = Int(Double(sampleRate) * seconds)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count * 2)
    for index in 0..<count {
        let value = Int16((amplitude * sin(2 * .pi * frequency * Double(index) / Double(sampleRate))).rounded())
        let word = UInt16(bitPattern: value)
        bytes.append(UInt8(word & 0xFF))
        bytes.append(UInt8(word >> 8))
    }
    return bytes
}
