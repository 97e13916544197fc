/// Typed views of a value. Each returns nil when the value has another type, so decoders at the
/// edge can turn a mismatch into an error that names the field. Variants are looked through.
extension DBusValue {
    /// The value inside any number of nested variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var boolValue: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    public var stringValue: String? {
        switch unwrapped {
        case .string(let value): value
        case .objectPath(let value): value.rawValue
        case .signature(let value): value.rawValue
        default: nil
        }
    }

    public var objectPathValue: DBusObjectPath? {
        if case .objectPath(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type that fits in an `Int` (every one but `t` values above `Int.max`).
    public var intValue: Int? {
        switch unwrapped {
        case .byte(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        default: nil
        }
    }

    public var doubleValue: Double? {
        if case .double(let value) = unwrapped { return value }
        return nil
    }

    /// `ay`, also accepted as a generic array of `y`.
    public var bytesValue: [UInt8]? {
        switch unwrapped {
        case .bytes(let value): return value
        case .array(let element, let values) where element.rawValue == "y":
            var bytes: [UInt8] = []
            bytes.reserveCapacity(values.count)
            for case .byte(let byte) in values { bytes.append(byte) }
            return bytes
        default: return nil
        }
    }

    /// The elements of any array (`ay` gives `.byte` elements).
    public var arrayValue: [DBusValue]? {
        switch unwrapped {
        case .array(_, let values): values
        case .bytes(let bytes): bytes.map(DBusValue.byte)
        default: nil
        }
    }

    public var dictionaryValue: [DBusDictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// An `a{s*}` dictionary keyed by string; later duplicates win. Nil for any other type.
    public var stringKeyedValue: [String: DBusValue]? {
        guard case .dictionary(let key, _, let entries) = unwrapped, key.rawValue == "s" else {
            return nil
        }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            if case .string(let name) = entry.key { result[name] = entry.value.unwrapped }
        }
        return result
    }

    public var structureValue: [DBusValue]? {
        if case .structure(let fields) = unwrapped { return fields }
        return nil
    }
}
