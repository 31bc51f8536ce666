package io.github.ratelimit.benchmarks;

import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Counts the commands Redis executed per decision during measurement, from {@code INFO commandstats}: script calls
 * (EVALSHA, EVAL) and every command (those run inside scripts included); and the CPU time {@code redis-server} spent
 * per decision, from {@code INFO cpu} (its whole process: reading, parsing and replying included), which tells the
 * work a limiter leaves to Redis apart from the work it does in the client.
 */
final class CommandCounter {

	private final RedisURI server;

	private final LongAdder decisions = new LongAdder();

	private long scripts;

	private long total;

	private long measuredDecisions;

	private long scriptMicros;

	private double cpuSecondsAtStart;

	private double cpuSeconds;

	private boolean counting;

	CommandCounter(RedisURI server) {
		this.server = server;
	}

	void decided() {
		this.decisions.increment();
	}

	void start() {
		this.cpuSecondsAtStart = cpuSeconds(execute(true));
		this.decisions.reset();
		this.counting = true;
	}

	void stop() {
		if (!this.counting) {
			return;
		}
		this.counting = false;
		String stats = execute(false);
		long decided = this.decisions.sum();
		long scripts = 0;
		long total = 0;
		for (String line : stats.split("\r\n")) {
			if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info") && !line.startsWith("cmdstat_config")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				long calls = field(line, "calls");
				total += calls;
				if (name.equals("evalsha") || name.equals("eval")) {
					scripts += calls;
					this.scriptMicros += field(line, "usec");
				}
			}
		}
		this.scripts += scripts;
		this.total += total;
		this.cpuSeconds += cpuSeconds(stats) - this.cpuSecondsAtStart;
		this.measuredDecisions += decided;
	}

	void report(String label) {
		if (this.measuredDecisions == 0) {
			return;
		}
		System.out.printf(
				"%nREDIS-COMMANDS %s: %.3f script calls and %.3f commands per decision (%d decisions), "
						+ "redis-server CPU %.2f us per decision (%.2f of them inside scripts)%n",
				label, (double) this.scripts / this.measuredDecisions, (double) this.total / this.measuredDecisions,
				this.measuredDecisions, this.cpuSeconds * 1e6 / this.measuredDecisions,
				(double) this.scriptMicros / this.measuredDecisions);
	}

	/** A number of a {@code cmdstat_} line: {@code cmdstat_evalsha:calls=12,usec=345,usec_per_call=28.75,...}. */
	private static long field(String line, String name) {
		int start = line.indexOf(name + "=") + name.length() + 1;
		return Long.parseLong(line.substring(start, line.indexOf(',', start)));
	}

	/** The CPU seconds (user and system) of {@code redis-server} so far, from the {@code INFO cpu} section. */
	static double cpuSeconds(String info) {
		double seconds = 0;
		for (String line : info.split("\r\n")) {
			if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
				seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		return seconds;
	}

	private String execute(boolean reset) {
		RedisClient client = RedisClient.create(this.server);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			if (reset) {
				connection.sync().configResetstat();
				return connection.sync().info("cpu");
			}
			return connection.sync().info("commandstats") + connection.sync().info("cpu");
		}
		finally {
			client.shutdown();
		}
	}

}
