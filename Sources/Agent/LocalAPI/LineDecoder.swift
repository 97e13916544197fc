import NIOCore

/// A line of the local API's protocol, as ``LineDecoder`` cuts it from the stream.
enum ProtocolLine: Sendable, Equatable {
    /// The text before a newline, decoded as UTF-8 (invalid bytes become U+FFFD).
    case line(String)
    /// More than the limit arrived without a newline; what follows is discarded.
    case tooLong
}

/// Cuts a byte stream into newline-terminated lines, the framing of the local API in both
/// directions. A partial line at the end of the stream is dropped: only complete lines are
/// requests (or answers).
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ProtocolLine

    /// The longest line accepted while its newline has not arrived; past it the decoder emits
    /// ``ProtocolLine/tooLong`` once and discards the rest of the stream.
    let maximumLength: Int
    private var discarding = false

    init(maximumLength: Int = .max) {
        self.maximumLength = maximumLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if discarding {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maximumLength {
                discarding = true
                buffer.moveReaderIndex(to: buffer.writerIndex)
                context.fireChannelRead(wrapInboundOut(.tooLong))
            }
            return .needMoreData
        }
        let text = buffer.readString(length: newline - buffer.readerIndex) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(.line(text)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
