package io.github.ratelimit.benchmarks;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A closed-loop HTTP/1.1 load generator for loopback benchmarks, used when {@code wrk} is not installed: each
 * connection sends a GET, reads the whole response (keep-alive), and sends the next, for a fixed duration.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.HttpLoad http://127.0.0.1:8080/api/v1/unlimited 16 10
 * }
 * Prints one line: requests per second, p50 and p99 latency in microseconds, and the count of 2xx, 429 and other
 * statuses. It only ever connects to the host given, and stops by itself.
 */
public final class HttpLoad {

	private HttpLoad() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 3) {
			System.err.println("Usage: HttpLoad <url> <connections> <seconds>");
			System.exit(2);
		}
		Result result = run(java.net.URI.create(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2]));
		System.out.println(result);
	}

	static Result run(java.net.URI url, int connections, int seconds) throws InterruptedException {
		String host = url.getHost();
		int port = (url.getPort() != -1) ? url.getPort() : 80;
		byte[] request = ("GET " + url.getRawPath() + ((url.getRawQuery() != null) ? "?" + url.getRawQuery() : "")
				+ " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nAccept: application/json\r\n\r\n")
			.getBytes(StandardCharsets.US_ASCII);
		AtomicBoolean running = new AtomicBoolean(true);
		List<Worker> workers = new ArrayList<>();
		CountDownLatch done = new CountDownLatch(connections);
		for (int i = 0; i < connections; i++) {
			Worker worker = new Worker(host, port, request, running, done);
			workers.add(worker);
			Thread thread = new Thread(worker, "http-load-" + i);
			thread.setDaemon(true);
			thread.start();
		}
		long start = System.nanoTime();
		Thread.sleep(seconds * 1000L);
		running.set(false);
		done.await();
		long elapsed = System.nanoTime() - start;
		long total = 0;
		long ok = 0;
		long tooMany = 0;
		long other = 0;
		int samples = 0;
		for (Worker worker : workers) {
			samples += worker.count;
		}
		long[] latencies = new long[samples];
		int offset = 0;
		for (Worker worker : workers) {
			System.arraycopy(worker.latencies, 0, latencies, offset, worker.count);
			offset += worker.count;
			ok += worker.ok;
			tooMany += worker.tooMany;
			other += worker.other;
		}
		total = ok + tooMany + other;
		Arrays.sort(latencies);
		return new Result(total * 1e9 / elapsed, percentile(latencies, 0.50), percentile(latencies, 0.99), ok, tooMany,
				other);
	}

	private static long percentile(long[] sorted, double p) {
		return (sorted.length == 0) ? 0 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * p))] / 1000;
	}

	record Result(double requestsPerSecond, long p50Micros, long p99Micros, long ok, long tooMany, long other) {

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "requests/s=%.0f p50_us=%d p99_us=%d 2xx=%d 429=%d other=%d",
					this.requestsPerSecond, this.p50Micros, this.p99Micros, this.ok, this.tooMany, this.other);
		}

	}

	private static final class Worker implements Runnable {

		private final String host;

		private final int port;

		private final byte[] request;

		private final AtomicBoolean running;

		private final CountDownLatch done;

		long[] latencies = new long[1 << 16];

		int count;

		long ok;

		long tooMany;

		long other;

		/** Whether the last response said {@code Connection: close}. */
		private boolean closing;

		Worker(String host, int port, byte[] request, AtomicBoolean running, CountDownLatch done) {
			this.host = host;
			this.port = port;
			this.request = request;
			this.running = running;
			this.done = done;
		}

		@Override
		public void run() {
			try {
				while (this.running.get()) {
					try (Socket socket = new Socket()) {
						socket.setTcpNoDelay(true);
						socket.connect(new InetSocketAddress(this.host, this.port), 5_000);
						socket.setSoTimeout(30_000);
						OutputStream out = socket.getOutputStream();
						InputStream in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
						while (this.running.get()) {
							long start = System.nanoTime();
							out.write(this.request);
							out.flush();
							int status = readResponse(in);
							record(System.nanoTime() - start, status);
							if (this.closing) {
								// A complete response that ends the connection (Tomcat does so every 100 requests
								// by default): counted by its status, then a new connection.
								break;
							}
						}
					}
					catch (IOException ex) {
						this.other++;
					}
				}
			}
			finally {
				this.done.countDown();
			}
		}

		private void record(long nanos, int status) {
			if (status == 429) {
				this.tooMany++;
			}
			else if (status >= 200 && status < 300) {
				this.ok++;
			}
			else {
				this.other++;
			}
			if (this.count == this.latencies.length) {
				this.latencies = Arrays.copyOf(this.latencies, this.count * 2);
			}
			this.latencies[this.count++] = nanos;
		}

		/**
		 * Read one response and return its status; {@link #closing} tells whether the server closes the connection.
		 */
		private int readResponse(InputStream in) throws IOException {
			String statusLine = readLine(in);
			int status = Integer.parseInt(statusLine.substring(9, 12));
			long length = -1;
			boolean chunked = false;
			boolean close = false;
			String line;
			while (!(line = readLine(in)).isEmpty()) {
				String lower = line.toLowerCase(Locale.ROOT);
				if (lower.startsWith("content-length:")) {
					length = Long.parseLong(lower.substring(15).trim());
				}
				else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
					chunked = true;
				}
				else if (lower.startsWith("connection:") && lower.contains("close")) {
					close = true;
				}
			}
			if (chunked) {
				while (true) {
					long size = Long.parseLong(readLine(in).trim(), 16);
					skip(in, size);
					readLine(in);
					if (size == 0) {
						break;
					}
				}
			}
			else if (length > 0) {
				skip(in, length);
			}
			this.closing = close;
			return status;
		}

		private static void skip(InputStream in, long bytes) throws IOException {
			long left = bytes;
			while (left > 0) {
				long skipped = in.skip(left);
				if (skipped <= 0) {
					if (in.read() < 0) {
						throw new IOException("connection closed mid-response");
					}
					skipped = 1;
				}
				left -= skipped;
			}
		}

		private static String readLine(InputStream in) throws IOException {
			StringBuilder line = new StringBuilder(64);
			int c;
			while ((c = in.read()) != '\n') {
				if (c < 0) {
					throw new IOException("connection closed");
				}
				if (c != '\r') {
					line.append((char) c);
				}
			}
			return line.toString();
		}

	}

}
