import CDBus

/// Converts between ``DBusMessage`` values and libdbus messages. The only place that builds or
/// reads libdbus messages.
///
/// libdbus aborts the process on API misuse (an invalid name, a value that does not match its
/// container's signature), so everything is validated here first and turned into a thrown
/// ``DBusError``: malformed input is an error, never a trap.
enum MessageCodec {
    /// Builds a libdbus message. The caller owns the returned reference (`dbus_message_unref`).
    static func encode(_ message: DBusMessage) throws -> OpaquePointer {
        try validateHeader(message)
        let typeCode: Int32 = switch message.kind {
        case .methodCall: 1
        case .methodReturn: 2
        case .error: 3
        case .signal: 4
        }
        guard let raw = dbus_message_new(typeCode) else { throw noMemory }
        do {
            try setHeader(message, on: raw)
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(raw, &iter)
            for value in message.body {
                try append(value, to: &iter)
            }
            return raw
        } catch {
            dbus_message_unref(raw)
            throw error
        }
    }

    /// Reads a libdbus message into Swift values. Unknown message types and unsupported value
    /// types (Unix file descriptors) are errors.
    ///
    /// `strings` shares the text that repeats from message to message (names, paths).
    static func decode(_ raw: OpaquePointer, strings: inout StringInterner) throws -> DBusMessage {
        let kind: DBusMessage.Kind
        switch dbus_message_get_type(raw) {
        case 1: kind = .methodCall
        case 2: kind = .methodReturn
        case 3: kind = .error
        case 4: kind = .signal
        case let other: throw DBusError.invalidArguments("unknown D-Bus message type \(other)")
        }
        var body: [DBusValue] = []
        var iter = DBusMessageIter()
        if dbus_message_iter_init(raw, &iter) != 0 {
            repeat {
                body.append(try read(&iter, &strings))
            } while dbus_message_iter_next(&iter) != 0
        }
        var message = DBusMessage(kind: kind, body: body)
        message.serial = dbus_message_get_serial(raw)
        let replySerial = dbus_message_get_reply_serial(raw)
        message.replySerial = replySerial == 0 ? nil : replySerial
        if let path = dbus_message_get_path(raw) { message.path = DBusObjectPath(validated: strings.string(path)) }
        if let interface = dbus_message_get_interface(raw) { message.interface = strings.string(interface) }
        if let member = dbus_message_get_member(raw) { message.member = strings.string(member) }
        if let errorName = dbus_message_get_error_name(raw) { message.errorName = strings.string(errorName) }
        if let sender = dbus_message_get_sender(raw) { message.sender = strings.string(sender) }
        if let destination = dbus_message_get_destination(raw) { message.destination = strings.string(destination) }
        message.noReplyExpected = dbus_message_get_no_reply(raw) != 0
        return message
    }

    // MARK: - Header

    private static func validateHeader(_ message: DBusMessage) throws {
        if let path = message.path, !DBusObjectPath.isValid(path.rawValue) {
            throw DBusError.invalidArguments("“\(path.rawValue)” is not a valid object path")
        }
        if let interface = message.interface {
            try check(interface, dbus_validate_interface, "interface name")
        }
        if let member = message.member { try check(member, dbus_validate_member, "member name") }
        if let name = message.errorName { try check(name, dbus_validate_error_name, "error name") }
        if let destination = message.destination {
            try check(destination, dbus_validate_bus_name, "bus name")
        }
        switch message.kind {
        case .methodCall:
            guard message.path != nil, message.member != nil else {
                throw DBusError.invalidArguments("a method call needs a path and a member")
            }
        case .signal:
            guard message.path != nil, message.interface != nil, message.member != nil else {
                throw DBusError.invalidArguments("a signal needs a path, an interface and a member")
            }
        case .error:
            guard message.errorName != nil, message.replySerial != nil else {
                throw DBusError.invalidArguments("an error reply needs an error name and a reply serial")
            }
        case .methodReturn:
            guard message.replySerial != nil else {
                throw DBusError.invalidArguments("a method return needs a reply serial")
            }
        }
        let signature = message.signature
        guard signature.utf8.count <= 255, signature.withCString({ dbus_signature_validate($0, nil) }) != 0
        else {
            throw DBusError.invalidArguments("the body signature “\(signature)” is not valid")
        }
    }

    private static func check(
        _ name: String, _ validate: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t,
        _ what: String
    ) throws {
        guard !name.utf8.contains(0), name.withCString({ validate($0, nil) }) != 0 else {
            throw DBusError.invalidArguments("“\(name)” is not a valid D-Bus \(what)")
        }
    }

    private static func setHeader(_ message: DBusMessage, on raw: OpaquePointer) throws {
        var ok = true
        if let path = message.path { ok = ok && path.rawValue.withCString { dbus_message_set_path(raw, $0) } != 0 }
        if let interface = message.interface {
            ok = ok && interface.withCString { dbus_message_set_interface(raw, $0) } != 0
        }
        if let member = message.member { ok = ok && member.withCString { dbus_message_set_member(raw, $0) } != 0 }
        if let name = message.errorName {
            ok = ok && name.withCString { dbus_message_set_error_name(raw, $0) } != 0
        }
        if let destination = message.destination {
            ok = ok && destination.withCString { dbus_message_set_destination(raw, $0) } != 0
        }
        if let replySerial = message.replySerial {
            ok = ok && dbus_message_set_reply_serial(raw, replySerial) != 0
        }
        dbus_message_set_no_reply(raw, message.noReplyExpected ? 1 : 0)
        guard ok else { throw noMemory }
    }

    // MARK: - Writing values

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws {
        switch value {
        case .byte(var v): try appendBasic(&iter, TypeCode.byte, &v)
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            try appendBasic(&iter, TypeCode.boolean, &v)
        case .int16(var v): try appendBasic(&iter, TypeCode.int16, &v)
        case .uint16(var v): try appendBasic(&iter, TypeCode.uint16, &v)
        case .int32(var v): try appendBasic(&iter, TypeCode.int32, &v)
        case .uint32(var v): try appendBasic(&iter, TypeCode.uint32, &v)
        case .int64(var v): try appendBasic(&iter, TypeCode.int64, &v)
        case .uint64(var v): try appendBasic(&iter, TypeCode.uint64, &v)
        case .double(var v): try appendBasic(&iter, TypeCode.double, &v)
        case .string(let text): try appendString(text, TypeCode.string, &iter)
        case .objectPath(let path):
            guard DBusObjectPath.isValid(path.rawValue) else {
                throw DBusError.invalidArguments("“\(path.rawValue)” is not a valid object path")
            }
            try appendString(path.rawValue, TypeCode.objectPath, &iter)
        case .signature(let signature):
            guard isValidSignature(signature.rawValue, single: false) else {
                throw DBusError.invalidArguments("“\(signature.rawValue)” is not a valid signature")
            }
            try appendString(signature.rawValue, TypeCode.signature, &iter)
        case .bytes(let bytes):
            try withContainer(&iter, TypeCode.array, "y") { sub in
                guard !bytes.isEmpty else { return }
                let ok = bytes.withUnsafeBufferPointer { buffer -> dbus_bool_t in
                    var base = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(&sub, TypeCode.byte, &base, Int32(buffer.count))
                }
                guard ok != 0 else { throw noMemory }
            }
        case .array(let element, let values):
            guard isValidSignature(element.rawValue, single: true) else {
                throw DBusError.invalidArguments("“\(element.rawValue)” is not a single complete type")
            }
            try withContainer(&iter, TypeCode.array, element.rawValue) { sub in
                for (index, item) in values.enumerated() {
                    guard item.signatureText == element.rawValue else {
                        throw DBusError.invalidArguments(
                            "array element \(index) has type \(item.signatureText), expected \(element.rawValue)")
                    }
                    try append(item, to: &sub)
                }
            }
        case .dictionary(let key, let valueType, let entries):
            let entrySignature = "{" + key.rawValue + valueType.rawValue + "}"
            guard key.rawValue.utf8.count == 1, TypeCode.isBasic(key.rawValue.utf8.first!),
                  isValidSignature("a" + entrySignature, single: true)
            else {
                throw DBusError.invalidArguments("“a\(entrySignature)” is not a valid dictionary type")
            }
            try withContainer(&iter, TypeCode.array, entrySignature) { sub in
                for (index, entry) in entries.enumerated() {
                    guard entry.key.signatureText == key.rawValue, entry.value.signatureText == valueType.rawValue
                    else {
                        throw DBusError.invalidArguments(
                            "dictionary entry \(index) has types \(entry.key.signatureText)/"
                                + "\(entry.value.signatureText), expected \(key.rawValue)/\(valueType.rawValue)")
                    }
                    try withContainer(&sub, TypeCode.dictEntry, nil) { entryIter in
                        try append(entry.key, to: &entryIter)
                        try append(entry.value, to: &entryIter)
                    }
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArguments("a structure needs at least one field") }
            try withContainer(&iter, TypeCode.structure, nil) { sub in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            let signature = inner.signatureText
            guard isValidSignature(signature, single: true) else {
                throw DBusError.invalidArguments("“\(signature)” cannot be carried in a variant")
            }
            try withContainer(&iter, TypeCode.variant, signature) { sub in
                try append(inner, to: &sub)
            }
        }
    }

    private static func appendBasic<T>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: inout T) throws {
        let ok = withUnsafeMutablePointer(to: &value) { dbus_message_iter_append_basic(&iter, type, $0) }
        guard ok != 0 else { throw noMemory }
    }

    private static func appendString(_ text: String, _ type: Int32, _ iter: inout DBusMessageIter) throws {
        guard !text.utf8.contains(0) else {
            throw DBusError.invalidArguments("a D-Bus string cannot contain a NUL character")
        }
        let ok = text.withCString { pointer -> dbus_bool_t in
            var cString: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &cString)
        }
        guard ok != 0 else { throw noMemory }
    }

    private static func withContainer(
        _ iter: inout DBusMessageIter, _ type: Int32, _ contained: String?,
        _ body: (inout DBusMessageIter) throws -> Void
    ) throws {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let contained {
            opened = contained.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub)
        }
        guard opened != 0 else { throw noMemory }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw noMemory }
    }

    static func isValidSignature(_ signature: String, single: Bool) -> Bool {
        guard !signature.utf8.contains(0), signature.utf8.count <= 255 else { return false }
        return signature.withCString {
            single ? dbus_signature_validate_single($0, nil) : dbus_signature_validate($0, nil)
        } != 0
    }

    // MARK: - Reading values

    private static func read(_ iter: inout DBusMessageIter, _ strings: inout StringInterner) throws -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case TypeCode.byte: return .byte(readBasic(&iter, UInt8(0)))
        case TypeCode.boolean: return .boolean(readBasic(&iter, dbus_bool_t(0)) != 0)
        case TypeCode.int16: return .int16(readBasic(&iter, Int16(0)))
        case TypeCode.uint16: return .uint16(readBasic(&iter, UInt16(0)))
        case TypeCode.int32: return .int32(readBasic(&iter, Int32(0)))
        case TypeCode.uint32: return .uint32(readBasic(&iter, UInt32(0)))
        case TypeCode.int64: return .int64(readBasic(&iter, Int64(0)))
        case TypeCode.uint64: return .uint64(readBasic(&iter, UInt64(0)))
        case TypeCode.double: return .double(readBasic(&iter, Double(0)))
        case TypeCode.string: return .string(readString(&iter, &strings))
        case TypeCode.objectPath:
            // libdbus validated the message on receipt.
            return .objectPath(DBusObjectPath(validated: readString(&iter, &strings)))
        case TypeCode.signature: return .signature(DBusSignature(unchecked: readString(&iter, &strings)))
        case TypeCode.array: return try readArray(&iter, &strings)
        case TypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                fields.append(try read(&sub, &strings))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub, &strings))
        case TypeCode.unixFD:
            throw DBusError.invalidArguments("Unix file descriptors (type h) are not supported")
        default:
            throw DBusError.invalidArguments("unexpected D-Bus type code \(type)")
        }
    }

    private static func readArray(_ iter: inout DBusMessageIter, _ strings: inout StringInterner) throws -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementType == TypeCode.byte {
            var base: UnsafeMutableRawPointer?
            var count: Int32 = 0
            if dbus_message_iter_get_arg_type(&sub) == TypeCode.invalid { return .bytes([]) }
            withUnsafeMutablePointer(to: &base) { pointer in
                dbus_message_iter_get_fixed_array(&sub, pointer, &count)
            }
            guard let base, count > 0 else { return .bytes([]) }
            let buffer = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: Int(count))
            return .bytes(Array(buffer))
        }
        // Element types come from the first element; only an empty array needs libdbus to spell
        // its signature (which costs an allocation).
        if elementType == TypeCode.dictEntry {
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                var entryIter = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entryIter)
                let entryKey = try read(&entryIter, &strings)
                guard dbus_message_iter_next(&entryIter) != 0 else {
                    throw DBusError.invalidArguments("a dictionary entry has no value")
                }
                entries.append(DBusDictionaryEntry(entryKey, try read(&entryIter, &strings)))
                dbus_message_iter_next(&sub)
            }
            if let first = entries.first {
                return .dictionary(key: first.key.signature, value: first.value.signature, entries)
            }
            // "a{kv…}": one basic key code, then the value's complete type.
            let inner = currentSignature(&iter).dropFirst(2).dropLast()
            return .dictionary(key: DBusSignature(unchecked: String(inner.prefix(1))),
                               value: DBusSignature(unchecked: String(inner.dropFirst())), entries)
        }
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
            values.append(try read(&sub, &strings))
            dbus_message_iter_next(&sub)
        }
        if let first = values.first { return .array(element: first.signature, values) }
        // An empty array: a basic element type is its own one-letter signature (`as`, the
        // invalidated list of every PropertiesChanged, is the common case); containers need libdbus.
        if let code = UInt8(exactly: elementType), TypeCode.isBasic(code) {
            return .array(element: DBusSignature(unchecked: String(UnicodeScalar(code))), [])
        }
        return .array(element: DBusSignature(unchecked: String(currentSignature(&iter).dropFirst())), [])
    }

    private static func readBasic<T>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, $0) }
        return value
    }

    private static func readString(_ iter: inout DBusMessageIter, _ strings: inout StringInterner) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { strings.string($0) } ?? ""
    }

    private static func currentSignature(_ iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    private static var noMemory: DBusError {
        DBusError(name: DBusError.noMemoryName, message: "libdbus ran out of memory building a message")
    }
}

/// libdbus's type codes (its `DBUS_TYPE_*` macros do not import into Swift).
enum TypeCode {
    static let invalid: Int32 = 0
    static let byte = code("y")
    static let boolean = code("b")
    static let int16 = code("n")
    static let uint16 = code("q")
    static let int32 = code("i")
    static let uint32 = code("u")
    static let int64 = code("x")
    static let uint64 = code("t")
    static let double = code("d")
    static let string = code("s")
    static let objectPath = code("o")
    static let signature = code("g")
    static let unixFD = code("h")
    static let array = code("a")
    static let structure = code("r")
    static let variant = code("v")
    static let dictEntry = code("e")

    static func isBasic(_ code: UInt8) -> Bool {
        "ybnqiuxtdsogh".utf8.contains(code)
    }

    private static func code(_ character: Unicode.Scalar) -> Int32 { Int32(character.value) }
}
