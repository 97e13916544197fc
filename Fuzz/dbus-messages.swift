// Fuzz target: D-Bus signals as they arrive from the bus, decoded into values and encoded back.
//
// The input is a signature length, the signature and the body; the harness puts a fixed signal
// header in front (little-endian, path, interface, member, signature), so the fuzzer spends its
// time on bodies and signatures rather than on headers libdbus refuses anyway.
import CDBus

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusMessages(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    guard let first = bytes.first else { return 0 }
    let signatureLength = min(Int(first), bytes.count - 1)
    let signature = Array(bytes[1..<(1 + signatureLength)])
    let body = Array(bytes[(1 + signatureLength)...])
    var wire = signalHeader(signature: signature, bodyLength: body.count)
    wire += body
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    let raw = wire.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
            dbus_message_demarshal($0, Int32(buffer.count), &error)
        }
    }
    guard let raw else { return 0 }
    defer { dbus_message_unref(raw) }
    var strings = StringInterner()
    if let message = try? MessageCodec.decode(raw, strings: &strings),
       let encoded = try? MessageCodec.encode(message) {
        dbus_message_unref(encoded)
    }
    return 0
}

/// A little-endian signal header (serial 1) for a body of `bodyLength` bytes with `signature`.
private func signalHeader(signature: [UInt8], bodyLength: Int) -> [UInt8] {
    var out: [UInt8] = [UInt8(ascii: "l"), 4, 0, 1]
    func u32(_ value: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { out += $0 } }
    func pad(_ alignment: Int) { while out.count % alignment != 0 { out.append(0) } }
    func field(_ code: UInt8, _ type: Character, _ value: [UInt8]) {
        pad(8)
        out += [code, 1, UInt8(ascii: type.unicodeScalars.first!), 0]
        if type == "g" {
            out.append(UInt8(truncatingIfNeeded: value.count))
        } else {
            pad(4)
            u32(value.count)
        }
        out += value + [0]
    }
    u32(bodyLength)
    u32(1)
    let lengthAt = out.count
    u32(0)
    let fieldsStart = out.count
    field(1, "o", Array("/org/bluez/hci0/dev_C0_FF_EE_00_00_01".utf8))
    field(2, "s", Array("org.freedesktop.DBus.Properties".utf8))
    field(3, "s", Array("PropertiesChanged".utf8))
    if !signature.isEmpty { field(8, "g", signature) }
    let fieldsLength = UInt32(out.count - fieldsStart).littleEndian
    withUnsafeBytes(of: fieldsLength) { out.replaceSubrange(lengthAt..<(lengthAt + 4), with: $0) }
    pad(8)
    return out
}
