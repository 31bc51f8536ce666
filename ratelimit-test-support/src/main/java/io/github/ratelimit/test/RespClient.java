package io.github.ratelimit.test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal blocking Redis client for test control: {@code INFO}, {@code CLIENT PAUSE}, {@code FLUSHALL},
 * {@code CLUSTER INFO}. It speaks RESP2 and returns simple strings, bulk strings and integers as Java values, arrays
 * as lists, and throws {@link RedisErrorException} for error replies.
 */
public final class RespClient implements AutoCloseable {

	private final Socket socket;

	private final InputStream in;

	private final OutputStream out;

	public RespClient(String host, int port) {
		try {
			this.socket = new Socket();
			this.socket.connect(new InetSocketAddress(host, port), 2_000);
			this.socket.setSoTimeout(30_000);
			this.in = new BufferedInputStream(this.socket.getInputStream());
			this.out = this.socket.getOutputStream();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot connect to Redis at " + host + ":" + port, ex);
		}
	}

	/**
	 * Send a command and return its reply.
	 */
	public synchronized Object call(String... command) {
		try {
			ByteArrayOutputStream request = new ByteArrayOutputStream();
			request.write(("*" + command.length + "\r\n").getBytes(StandardCharsets.UTF_8));
			for (String part : command) {
				byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
				request.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
				request.write(bytes);
				request.write("\r\n".getBytes(StandardCharsets.UTF_8));
			}
			this.out.write(request.toByteArray());
			this.out.flush();
			return read();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis command " + command[0] + " failed", ex);
		}
	}

	/**
	 * Send a command whose reply is a string.
	 */
	public String callForString(String... command) {
		return String.valueOf(call(command));
	}

	private Object read() throws IOException {
		int type = this.in.read();
		String line = readLine();
		return switch (type) {
			case '+' -> line;
			case '-' -> throw new RedisErrorException(line);
			case ':' -> Long.parseLong(line);
			case '$' -> {
				int length = Integer.parseInt(line);
				if (length < 0) {
					yield null;
				}
				byte[] bytes = this.in.readNBytes(length);
				readLine();
				yield new String(bytes, StandardCharsets.UTF_8);
			}
			case '*' -> {
				int count = Integer.parseInt(line);
				if (count < 0) {
					yield null;
				}
				List<Object> items = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					items.add(read());
				}
				yield items;
			}
			case -1 -> throw new IOException("Connection closed by Redis");
			default -> throw new IOException("Unexpected RESP type '" + (char) type + "'");
		};
	}

	private String readLine() throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int previous = -1;
		while (true) {
			int next = this.in.read();
			if (next == -1) {
				throw new IOException("Connection closed by Redis");
			}
			if (previous == '\r' && next == '\n') {
				byte[] bytes = line.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			line.write(next);
			previous = next;
		}
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// Nothing to do: the server may already be gone.
		}
	}

	/**
	 * An error reply.
	 */
	public static final class RedisErrorException extends RuntimeException {

		RedisErrorException(String message) {
			super(message);
		}

	}

}
