package io.github.ratelimit.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 in front of a server, for what a real network does: it can drop the next responses (the
 * request reaches the server and takes effect, the client sees its connection close instead of an answer), hold
 * every byte (the client times out), or delay every byte by a fixed latency each way, as a link across a network
 * does (bytes keep flowing meanwhile: the latency adds to each round trip, not to the throughput). Each client
 * connection gets its own connection to the server.
 */
public final class TcpProxy implements AutoCloseable {

	private final String targetHost;

	private final int targetPort;

	private final ServerSocket server;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final AtomicInteger responsesToDrop = new AtomicInteger();

	private final AtomicLong droppedResponses = new AtomicLong();

	private volatile boolean holding;

	/** The latency each way, in nanoseconds. */
	private volatile long delayNanos;

	private volatile byte[] answer;

	/** The text a request must contain to get {@link #answer}; the others are forwarded. */
	private volatile String answerMarker = "";

	private volatile boolean closed;

	private TcpProxy(String targetHost, int targetPort) throws IOException {
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::accept, "tcp-proxy-" + this.server.getLocalPort());
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/**
	 * Start a proxy to the given server.
	 */
	public static TcpProxy to(String host, int port) {
		try {
			return new TcpProxy(host, port);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Drop the next {@code count} responses: the first bytes the server sends back on a connection close that
	 * connection instead of reaching the client.
	 */
	public void dropNextResponses(int count) {
		this.responsesToDrop.set(count);
	}

	/** Return how many responses were dropped so far. */
	public long droppedResponses() {
		return this.droppedResponses.get();
	}

	/**
	 * Delay every byte by this latency in each direction, for connections opened from now on, as a link across a
	 * network would: a round trip then takes twice as long.
	 */
	public void delay(java.time.Duration oneWay) {
		this.delayNanos = oneWay.toNanos();
	}

	/**
	 * Hold (or stop holding) every byte in both directions, as a network partition or a paused server would.
	 */
	public void hold(boolean holding) {
		this.holding = holding;
	}

	/**
	 * Answer every HTTP request with this raw response (status line, headers and body) instead of forwarding it, as
	 * a server in trouble would (throttling, say); {@code null} to forward again. Requests must carry a
	 * {@code Content-Length}.
	 */
	public void answerEveryRequestWith(String rawHttpResponse) {
		answerRequestsContaining("", rawHttpResponse);
	}

	/**
	 * Answer the HTTP requests that contain {@code marker} (in their headers or body) with this raw response, and
	 * forward the others, as a server would throttle one hot item of a table; {@code null} to forward every request
	 * again. The client must send one request at a time on a connection, each with a {@code Content-Length}.
	 */
	public void answerRequestsContaining(String marker, String rawHttpResponse) {
		this.answerMarker = marker;
		this.answer = (rawHttpResponse != null) ? rawHttpResponse.getBytes(java.nio.charset.StandardCharsets.UTF_8)
				: null;
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				Socket upstream = new Socket();
				upstream.connect(new InetSocketAddress(this.targetHost, this.targetPort), 2_000);
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream, false);
				pump(upstream, client, true);
			}
			catch (IOException ex) {
				// Closed, or the server is down: the client sees its connection fail, as it would without a proxy.
			}
		}
	}

	private void pump(Socket from, Socket to, boolean response) {
		long delayNanos = this.delayNanos;
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream();
					OutputStream out = (delayNanos > 0) ? new DelayedOutput(to.getOutputStream(), delayNanos)
							: to.getOutputStream()) {
				int read;
				java.io.ByteArrayOutputStream pending = new java.io.ByteArrayOutputStream();
				while ((read = in.read(buffer)) != -1) {
					while (this.holding && !this.closed) {
						Thread.sleep(5);
					}
					byte[] answer = this.answer;
					if (!response && answer != null) {
						pending.write(buffer, 0, read);
						while (completeRequestLength(pending.toByteArray()) > 0) {
							byte[] all = pending.toByteArray();
							int length = completeRequestLength(all);
							if (new String(all, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1)
								.contains(this.answerMarker)) {
								from.getOutputStream().write(answer);
								from.getOutputStream().flush();
							}
							else {
								out.write(all, 0, length);
								out.flush();
							}
							pending.reset();
							pending.write(all, length, all.length - length);
						}
						continue;
					}
					if (response && this.responsesToDrop.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
						this.droppedResponses.incrementAndGet();
						break;
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// One side closed.
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
			}
		}, "tcp-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	/**
	 * Writes each chunk once its latency has passed, in order, from a thread of its own, so that reading goes on
	 * meanwhile.
	 */
	private static final class DelayedOutput extends OutputStream {

		private final java.util.concurrent.BlockingQueue<Object[]> chunks = new java.util.concurrent.LinkedBlockingQueue<>();

		private final OutputStream out;

		private final long delayNanos;

		DelayedOutput(OutputStream out, long delayNanos) {
			this.out = out;
			this.delayNanos = delayNanos;
			Thread writer = new Thread(this::writeWhenDue, "tcp-proxy-delay");
			writer.setDaemon(true);
			writer.start();
		}

		@Override
		public void write(int b) {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] bytes, int offset, int length) {
			this.chunks.add(new Object[] { System.nanoTime() + this.delayNanos,
					java.util.Arrays.copyOfRange(bytes, offset, offset + length) });
		}

		@Override
		public void close() {
			this.chunks.add(new Object[] { System.nanoTime() + this.delayNanos, null });
		}

		private void writeWhenDue() {
			try {
				while (true) {
					Object[] chunk = this.chunks.take();
					long wait;
					while ((wait = (long) chunk[0] - System.nanoTime()) > 0) {
						java.util.concurrent.locks.LockSupport.parkNanos(wait);
					}
					if (chunk[1] == null) {
						this.out.close();
						return;
					}
					this.out.write((byte[]) chunk[1]);
					this.out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// The other side closed.
			}
		}

	}

	/** Return the length of the first complete HTTP request in the bytes, or 0 if there is none yet. */
	private static int completeRequestLength(byte[] bytes) {
		String text = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1);
		int end = text.indexOf("\r\n\r\n");
		if (end < 0) {
			return 0;
		}
		int length = 0;
		for (String line : text.substring(0, end).split("\r\n")) {
			if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
				length = Integer.parseInt(line.substring("content-length:".length()).trim());
			}
		}
		int total = end + 4 + length;
		return (bytes.length >= total) ? total : 0;
	}

	private void closeQuietly(Socket socket) {
		this.sockets.remove(socket);
		try {
			socket.close();
		}
		catch (IOException ex) {
			// Already closed.
		}
	}

	@Override
	public void close() {
		this.closed = true;
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// Already closed.
		}
		this.sockets.forEach(this::closeQuietly);
	}

}
