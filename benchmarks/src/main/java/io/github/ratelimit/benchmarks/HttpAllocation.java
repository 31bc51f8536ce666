package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.management.ThreadMXBean;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;

/**
 * What a request allocates on a plain endpoint and on a limited one of the same app: {@link HttpLoad} against each in
 * turn, with the bytes the app's threads allocated read from its {@link ThreadMXBean} (attached to the app's JVM by
 * its process id, through its local management agent).
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.HttpAllocation \
 *     http://127.0.0.1:8080 /api/v1/unlimited /api/v1/resources --app-pid=12345
 * }
 * The JVM counts every thread's allocations exactly, TLABs included, so a run of some seconds gives the bytes per
 * request to within a few bytes; a thread that ends during a run takes its count with it, which Tomcat's busy worker
 * threads do not. Warms up both endpoints for {@code --warm-up} seconds (60) each, then runs {@code --rounds} (3)
 * rounds of {@code --seconds} (15) per endpoint and prints every run and the median per endpoint.
 */
public final class HttpAllocation {

	private HttpAllocation() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 4) {
			System.err.println("Usage: HttpAllocation <base-url> <plain-path> <limited-path> --app-pid=<pid> "
					+ "[--warm-up=60] [--rounds=3] [--seconds=15] [--connections=16]");
			System.exit(2);
		}
		URI base = URI.create(args[0]);
		List<URI> endpoints = List.of(base.resolve(args[1]), base.resolve(args[2]));
		String appPid = null;
		int warmUp = 60;
		int rounds = 3;
		int seconds = 15;
		int connections = 16;
		for (int i = 3; i < args.length; i++) {
			String[] option = args[i].split("=", 2);
			switch (option[0]) {
				case "--app-pid" -> appPid = option[1];
				case "--warm-up" -> warmUp = Integer.parseInt(option[1]);
				case "--rounds" -> rounds = Integer.parseInt(option[1]);
				case "--seconds" -> seconds = Integer.parseInt(option[1]);
				case "--connections" -> connections = Integer.parseInt(option[1]);
				default -> throw new IllegalArgumentException("Unknown option " + args[i]);
			}
		}
		if (appPid == null) {
			throw new IllegalArgumentException("--app-pid is required: the measurement reads the app's allocations");
		}
		try (AppAllocations app = AppAllocations.attach(appPid)) {
			for (URI endpoint : endpoints) {
				HttpLoad.run(endpoint, connections, warmUp);
			}
			List<List<Double>> perRequest = List.of(new ArrayList<>(), new ArrayList<>());
			for (int round = 1; round <= rounds; round++) {
				for (int e = 0; e < endpoints.size(); e++) {
					Map<Long, Long> before = app.read();
					HttpLoad.Result load = HttpLoad.run(endpoints.get(e), connections, seconds);
					long bytes = AppAllocations.since(before, app.read());
					long requests = load.ok() + load.tooMany() + load.other();
					double bytesPerRequest = (double) bytes / requests;
					perRequest.get(e).add(bytesPerRequest);
					System.out.printf(Locale.ROOT, "round %d %-20s %,10d requests %,15d bytes %,8.0f bytes per request%n",
							round, endpoints.get(e).getPath(), requests, bytes, bytesPerRequest);
				}
			}
			double plain = median(perRequest.get(0));
			double limited = median(perRequest.get(1));
			System.out.printf(Locale.ROOT, "median: %s %,.0f bytes per request, %s %,.0f bytes per request (%+,.0f)%n",
					endpoints.get(0).getPath(), plain, endpoints.get(1).getPath(), limited, limited - plain);
		}
	}

	private static double median(List<Double> values) {
		return HttpOverhead.quantile(values.stream().mapToDouble(Double::doubleValue).toArray(), 0.5);
	}

	/** The app's per-thread allocation counters, over a JMX connection to its local management agent. */
	static final class AppAllocations implements AutoCloseable {

		private final JMXConnector connector;

		private final ThreadMXBean threads;

		private AppAllocations(JMXConnector connector, ThreadMXBean threads) {
			this.connector = connector;
			this.threads = threads;
		}

		static AppAllocations attach(String pid) throws IOException, AttachNotSupportedException {
			VirtualMachine vm = VirtualMachine.attach(pid);
			String address;
			try {
				address = vm.startLocalManagementAgent();
			}
			finally {
				vm.detach();
			}
			JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
			MBeanServerConnection connection = connector.getMBeanServerConnection();
			return new AppAllocations(connector, ManagementFactory.newPlatformMXBeanProxy(connection,
					ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class));
		}

		/** Bytes allocated so far by each live thread of the app, by thread id. */
		Map<Long, Long> read() {
			long[] ids = this.threads.getAllThreadIds();
			long[] bytes = this.threads.getThreadAllocatedBytes(ids);
			Map<Long, Long> allocated = new HashMap<>();
			for (int i = 0; i < ids.length; i++) {
				if (bytes[i] >= 0) {
					allocated.put(ids[i], bytes[i]);
				}
			}
			return allocated;
		}

		/** What the threads alive at the second reading allocated since the first (from zero for new threads). */
		static long since(Map<Long, Long> before, Map<Long, Long> after) {
			long total = 0;
			for (Map.Entry<Long, Long> thread : after.entrySet()) {
				total += thread.getValue() - before.getOrDefault(thread.getKey(), 0L);
			}
			return total;
		}

		@Override
		public void close() throws IOException {
			this.connector.close();
		}

	}

}
