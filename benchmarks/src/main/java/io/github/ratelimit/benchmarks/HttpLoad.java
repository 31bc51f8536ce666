package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;

/**
 * A closed-loop HTTP/1.1 load generator for loopback benchmarks: each connection sends a GET, reads the whole
 * response (keep-alive), and sends the next, for a fixed duration. Kept beside {@code wrk} for what {@code wrk} does
 * not do: {@link #runPhased} switches every connection between endpoints in one-second phases and reads the server's
 * CPU at each switch, the paired measurement of {@link HttpOverhead}.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.HttpLoad http://127.0.0.1:8080/api/v1/unlimited 16 10
 * }
 * Prints one line: requests per second, p50 and p99 latency in microseconds, the count of 2xx, 429 and other
 * statuses (failed exchanges count as other), and the mean latency in microseconds. It only ever connects to the host
 * given, and stops by itself.
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
		return runInterleaved(List.of(url), connections, seconds).get(0);
	}

	/**
	 * Load several endpoints of one server at once: each connection sends to them in turn, so that every endpoint
	 * meets the server in the same state at every moment, whatever else the machine does.
	 * @return one result per URL, in their order
	 */
	static List<Result> runInterleaved(List<java.net.URI> urls, int connections, int seconds)
			throws InterruptedException {
		byte[][] requests = requests(urls);
		java.net.URI first = urls.get(0);
		AtomicBoolean running = new AtomicBoolean(true);
		List<Worker> workers = new ArrayList<>();
		CountDownLatch done = new CountDownLatch(connections);
		for (int i = 0; i < connections; i++) {
			// Connections start at different endpoints, so that as many requests to each are in flight.
			Worker worker = new Worker(first.getHost(), port(first), requests, i % requests.length, running, done,
					null);
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
		List<Result> results = new ArrayList<>();
		for (int endpoint = 0; endpoint < requests.length; endpoint++) {
			results.add(result(workers, endpoint, elapsed));
		}
		return results;
	}

	/**
	 * Load two or more endpoints of one server in phases: every connection sends to the same endpoint, and all switch
	 * together to the next one at the end of each phase, on the connections they hold. Each phase's responses are
	 * counted, and {@code serverCpu} (the server's CPU time, in nanoseconds) is read at each switch, so that every phase
	 * sets one endpoint's requests against what the server spent on them. Phases of one endpoint follow each other as
	 * {@code endpointOf} says.
	 * @return the phases in order, each with its endpoint, responses, duration and the server's CPU time
	 */
	static List<Phase> runPhased(List<java.net.URI> urls, int connections, Duration phase, int phases,
			IntUnaryOperator endpointOf, LongSupplier serverCpu) throws InterruptedException {
		byte[][] requests = requests(urls);
		java.net.URI first = urls.get(0);
		PhaseClock clock = new PhaseClock(phases, endpointOf);
		AtomicBoolean running = new AtomicBoolean(true);
		CountDownLatch done = new CountDownLatch(connections);
		List<Worker> workers = new ArrayList<>();
		for (int i = 0; i < connections; i++) {
			Worker worker = new Worker(first.getHost(), port(first), requests, 0, running, done, clock);
			workers.add(worker);
			Thread thread = new Thread(worker, "http-load-" + i);
			thread.setDaemon(true);
			thread.start();
		}
		long[] cpu = new long[phases + 1];
		long[] at = new long[phases + 1];
		long start = System.nanoTime();
		for (int k = 0; k <= phases; k++) {
			long due = start + k * phase.toNanos();
			long wait;
			while ((wait = due - System.nanoTime()) > 0) {
				Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
			}
			cpu[k] = serverCpu.getAsLong();
			at[k] = System.nanoTime();
			clock.current = k;
		}
		running.set(false);
		done.await();
		List<Phase> result = new ArrayList<>(phases);
		for (int k = 0; k < phases; k++) {
			long responses = 0;
			long failed = 0;
			for (Worker worker : workers) {
				responses += worker.phaseResponses[k];
				failed += worker.phaseFailures[k];
			}
			result.add(new Phase(endpointOf.applyAsInt(k), responses, failed, at[k + 1] - at[k], cpu[k + 1] - cpu[k]));
		}
		return result;
	}

	/**
	 * One phase of {@link #runPhased}: its endpoint's index, the 2xx responses completed in it, the other responses
	 * and failed exchanges, its length and what the server spent in it, in nanoseconds.
	 */
	record Phase(int endpoint, long responses, long failures, long nanos, long serverCpuNanos) {

		double requestsPerSecond() {
			return this.responses * 1e9 / this.nanos;
		}

		double serverCpuMicrosPerRequest() {
			return (this.responses > 0) ? this.serverCpuNanos / 1000.0 / this.responses : Double.NaN;
		}

	}

	/** Which phase the load is in; one past the last when it is over. */
	private static final class PhaseClock {

		volatile int current = -1;

		final int phases;

		final IntUnaryOperator endpointOf;

		PhaseClock(int phases, IntUnaryOperator endpointOf) {
			this.phases = phases;
			this.endpointOf = endpointOf;
		}

		/** The endpoint to send to now: the current phase's, the first one's before it starts. */
		int endpoint() {
			int phase = this.current;
			return this.endpointOf.applyAsInt(Math.max(0, Math.min(phase, this.phases - 1)));
		}

	}

	private static byte[][] requests(List<java.net.URI> urls) {
		byte[][] requests = new byte[urls.size()][];
		for (int i = 0; i < requests.length; i++) {
			java.net.URI url = urls.get(i);
			requests[i] = ("GET " + url.getRawPath() + ((url.getRawQuery() != null) ? "?" + url.getRawQuery() : "")
					+ " HTTP/1.1\r\nHost: " + url.getHost() + ":" + port(url) + "\r\nAccept: application/json\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII);
		}
		return requests;
	}

	private static int port(java.net.URI url) {
		return (url.getPort() != -1) ? url.getPort() : 80;
	}

	private static Result result(List<Worker> workers, int endpoint, long elapsed) {
		int samples = 0;
		for (Worker worker : workers) {
			samples += worker.stats[endpoint].count;
		}
		long[] latencies = new long[samples];
		int offset = 0;
		long ok = 0;
		long tooMany = 0;
		long other = 0;
		long nanos = 0;
		for (Worker worker : workers) {
			Stats stats = worker.stats[endpoint];
			System.arraycopy(stats.latencies, 0, latencies, offset, stats.count);
			offset += stats.count;
			ok += stats.ok;
			tooMany += stats.tooMany;
			other += stats.other;
			nanos += stats.nanos;
		}
		long total = ok + tooMany + other;
		Arrays.sort(latencies);
		return new Result(total * 1e9 / elapsed, percentile(latencies, 0.50), percentile(latencies, 0.99), ok, tooMany,
				other, (samples > 0) ? nanos / 1000.0 / samples : 0);
	}

	private static long percentile(long[] sorted, double p) {
		return (sorted.length == 0) ? 0 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * p))] / 1000;
	}

	record Result(double requestsPerSecond, long p50Micros, long p99Micros, long ok, long tooMany, long other,
			double meanMicros) {

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "requests/s=%.0f p50_us=%d p99_us=%d 2xx=%d 429=%d other=%d mean_us=%.1f",
					this.requestsPerSecond, this.p50Micros, this.p99Micros, this.ok, this.tooMany, this.other,
					this.meanMicros);
		}

	}

	/** What one connection saw of one endpoint. */
	private static final class Stats {

		long[] latencies = new long[1 << 16];

		int count;

		long ok;

		long tooMany;

		long other;

		long nanos;

		void record(long nanos, int status) {
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
			this.nanos += nanos;
		}

	}

	private static final class Worker implements Runnable {

		private final String host;

		private final int port;

		private final byte[][] requests;

		private int next;

		private final AtomicBoolean running;

		private final CountDownLatch done;

		final Stats[] stats;

		/** Whether the last response said {@code Connection: close}. */
		private boolean closing;

		/** In phased load, which phase it is; {@code null} when the worker sends to its endpoints in turn. */
		private final PhaseClock clock;

		/** In phased load, by phase, the 2xx responses completed and the other responses and failed exchanges. */
		final long[] phaseResponses;

		final long[] phaseFailures;

		Worker(String host, int port, byte[][] requests, int first, AtomicBoolean running, CountDownLatch done,
				PhaseClock clock) {
			this.host = host;
			this.port = port;
			this.requests = requests;
			this.next = (clock != null) ? clock.endpoint() : first;
			this.running = running;
			this.done = done;
			this.clock = clock;
			this.phaseResponses = new long[(clock != null) ? clock.phases : 0];
			this.phaseFailures = new long[this.phaseResponses.length];
			this.stats = new Stats[requests.length];
			for (int i = 0; i < requests.length; i++) {
				this.stats[i] = new Stats();
			}
		}

		/** Count one exchange in the phase it completed in, and pick the endpoint of the next. */
		private void countPhase(int status) {
			PhaseClock clock = this.clock;
			if (clock == null) {
				this.next = (this.next + 1) % this.requests.length;
				return;
			}
			int phase = clock.current;
			if (phase >= 0 && phase < clock.phases) {
				if (status >= 200 && status < 300) {
					this.phaseResponses[phase]++;
				}
				else {
					this.phaseFailures[phase]++;
				}
			}
			this.next = clock.endpoint();
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
						ResponseReader in = new ResponseReader(socket.getInputStream());
						while (this.running.get()) {
							long start = System.nanoTime();
							out.write(this.requests[this.next]);
							out.flush();
							int status = readResponse(in);
							this.stats[this.next].record(System.nanoTime() - start, status);
							countPhase(status);
							if (this.closing) {
								// A complete response that ends the connection (Tomcat does so every 100 requests
								// by default): counted by its status, then a new connection.
								break;
							}
						}
					}
					catch (IOException ex) {
						this.stats[this.next].other++; // the endpoint whose exchange failed
						countPhase(-1);
					}
				}
			}
			finally {
				this.done.countDown();
			}
		}

		/**
		 * Read one response and return its status; {@link #closing} tells whether the server closes the connection.
		 */
		private int readResponse(ResponseReader in) throws IOException {
			int status = in.readStatus();
			long length = -1;
			boolean chunked = false;
			boolean close = false;
			while (in.readLine() > 0) {
				if (in.lineStartsWith(CONTENT_LENGTH)) {
					length = in.lineNumber(CONTENT_LENGTH.length, 10);
				}
				else if (in.lineStartsWith(TRANSFER_ENCODING) && in.lineContains(CHUNKED)) {
					chunked = true;
				}
				else if (in.lineStartsWith(CONNECTION) && in.lineContains(CLOSE)) {
					close = true;
				}
			}
			if (chunked) {
				while (true) {
					in.readLine();
					long chunk = in.lineNumber(0, 16);
					if (chunk == 0) {
						while (in.readLine() > 0) {
							// trailer fields, up to the empty line ending the response
						}
						break;
					}
					in.skip(chunk);
					in.readLine();
				}
			}
			else if (length > 0) {
				in.skip(length);
			}
			this.closing = close;
			return status;
		}

	}

	private static final byte[] HTTP_VERSION = ascii("http/1.");

	private static final byte[] CONTENT_LENGTH = ascii("content-length:");

	private static final byte[] TRANSFER_ENCODING = ascii("transfer-encoding:");

	private static final byte[] CONNECTION = ascii("connection:");

	private static final byte[] CHUNKED = ascii("chunked");

	private static final byte[] CLOSE = ascii("close");

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * Reads responses from a connection through a buffer of its own, one header line at a time into a reused array,
	 * comparing bytes: the load generator shares the cores with the server, so what it spends per header line would
	 * count against endpoints that send more headers.
	 */
	static final class ResponseReader {

		private final InputStream in;

		private final byte[] buffer = new byte[16 * 1024];

		private int position;

		private int limit;

		private final byte[] line = new byte[8 * 1024];

		private int lineLength;

		ResponseReader(InputStream in) {
			this.in = in;
		}

		private int read() throws IOException {
			if (this.position == this.limit) {
				int read = this.in.read(this.buffer, 0, this.buffer.length);
				if (read < 0) {
					throw new IOException("connection closed");
				}
				this.position = 0;
				this.limit = read;
			}
			return this.buffer[this.position++];
		}

		/** Read the status line and return the status code. */
		int readStatus() throws IOException {
			readLine();
			if (this.lineLength < 12 || !lineStartsWith(HTTP_VERSION) || !isDigit(this.line[9]) || !isDigit(this.line[10])
					|| !isDigit(this.line[11])) {
				throw new IOException("not an HTTP status line"); // out of step with the stream: a new connection
			}
			return (this.line[9] - '0') * 100 + (this.line[10] - '0') * 10 + (this.line[11] - '0');
		}

		/** Read one line, without its CRLF, and return its length: 0 for the empty line ending the headers. */
		int readLine() throws IOException {
			int length = 0;
			int c;
			while ((c = read()) != '\n') {
				if (c != '\r' && length < this.line.length) {
					this.line[length++] = (byte) c;
				}
			}
			this.lineLength = length;
			return length;
		}

		/** Whether the line starts with the given lower-case ASCII, ignoring case. */
		boolean lineStartsWith(byte[] prefix) {
			if (this.lineLength < prefix.length) {
				return false;
			}
			for (int i = 0; i < prefix.length; i++) {
				if (lower(this.line[i]) != prefix[i]) {
					return false;
				}
			}
			return true;
		}

		/** Whether the line contains the given lower-case ASCII, ignoring case. */
		boolean lineContains(byte[] text) {
			for (int start = 0; start + text.length <= this.lineLength; start++) {
				int i = 0;
				while (i < text.length && lower(this.line[start + i]) == text[i]) {
					i++;
				}
				if (i == text.length) {
					return true;
				}
			}
			return false;
		}

		/** The number the line holds from the given offset, spaces and tabs before it skipped. */
		long lineNumber(int offset, int radix) throws IOException {
			long value = 0;
			boolean digits = false;
			for (int i = offset; i < this.lineLength; i++) {
				int digit = Character.digit(this.line[i], radix);
				if (digit >= 0) {
					value = value * radix + digit;
					digits = true;
				}
				else if (digits || (this.line[i] != ' ' && this.line[i] != '\t')) {
					break;
				}
			}
			if (!digits) {
				throw new IOException("no number in a header line");
			}
			return value;
		}

		void skip(long bytes) throws IOException {
			long left = bytes;
			while (left > 0) {
				if (this.position == this.limit) {
					read();
					this.position--;
				}
				int step = (int) Math.min(left, this.limit - this.position);
				this.position += step;
				left -= step;
			}
		}

		private static boolean isDigit(byte c) {
			return c >= '0' && c <= '9';
		}

		private static byte lower(byte c) {
			return (c >= 'A' && c <= 'Z') ? (byte) (c + ('a' - 'A')) : c;
		}

	}

}
