package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The time of each rate limit decision, store call included, under a burst: Spring MVC against WebFlux, side by side,
 * in interleaved rounds. Each round sends, to each stack in turn (the order alternating from round to round), a burst
 * of {@code requests} requests of one client, new every burst, over {@code connections} keep-alive connections shared
 * between its instances; the decisions' times are the {@code ratelimit.decision} timer's histogram
 * ({@code /actuator/prometheus}, buckets set by the script), read before and after the burst. Prints each round's
 * 50th and 99th percentiles per stack and WebFlux's 99th over MVC's, then their medians with the range, after
 * {@code warmUp} rounds left out.
 * <p>
 * {@snippet lang = "shell" :
 * benchmarks/burst-decision-time.sh
 * }
 */
public final class BurstDecisionTime {

	private static final Pattern BUCKET = Pattern
		.compile("^ratelimit_decision_seconds_bucket\\{([^}]*)\\} ([0-9.eE+-]+)$");

	private static final Pattern LE = Pattern.compile("le=\"([^\"]+)\"");

	private BurstDecisionTime() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			int equals = arg.indexOf('=');
			options.put(arg.substring(2, equals), arg.substring(equals + 1));
		}
		Map<String, List<URI>> stacks = new LinkedHashMap<>();
		stacks.put("mvc", uris(options.get("mvc")));
		stacks.put("webflux", uris(options.get("webflux")));
		int rounds = Integer.parseInt(options.getOrDefault("rounds", "12"));
		int warmUp = Integer.parseInt(options.getOrDefault("warm-up", "2"));
		int requests = Integer.parseInt(options.getOrDefault("requests", "200"));
		int connections = Integer.parseInt(options.getOrDefault("connections", "32"));
		Map<String, List<double[]>> measured = new LinkedHashMap<>();
		stacks.keySet().forEach((stack) -> measured.put(stack, new ArrayList<>()));
		// Every measured round's decisions together, per stack: a 99th percentile of a few thousand decisions.
		Map<String, TreeMap<Double, Double>> pooledBefore = new LinkedHashMap<>();
		Map<String, TreeMap<Double, Double>> pooledAfter = new LinkedHashMap<>();
		stacks.keySet().forEach((stack) -> {
			pooledBefore.put(stack, new TreeMap<>());
			pooledAfter.put(stack, new TreeMap<>());
		});
		System.out.printf("%d rounds (%d to warm up), %d requests over %d connections per stack and round%n", rounds,
				warmUp, requests, connections);
		System.out.println("round  stack    admitted  decisions  p50 ms  p99 ms");
		for (int round = 1; round <= rounds; round++) {
			List<String> order = new ArrayList<>(stacks.keySet());
			if (round % 2 == 0) {
				Collections.reverse(order);
			}
			for (String stack : order) {
				List<URI> instances = stacks.get(stack);
				TreeMap<Double, Double> before = histogram(instances);
				int admitted = burst(instances, requests, connections, "198.18." + round + "." + stack.length());
				TreeMap<Double, Double> after = histogram(instances);
				double[] percentiles = percentiles(before, after);
				System.out.printf("%5d  %-7s  %8d  %9.0f  %6.3f  %6.3f%s%n", round, stack, admitted, percentiles[2],
						percentiles[0] * 1000, percentiles[1] * 1000, (round <= warmUp) ? "  (warm-up)" : "");
				if (round > warmUp) {
					measured.get(stack).add(percentiles);
					before.forEach((bound, count) -> pooledBefore.get(stack).merge(bound, count, Double::sum));
					after.forEach((bound, count) -> pooledAfter.get(stack).merge(bound, count, Double::sum));
				}
			}
		}
		double[] ratios = new double[measured.get("mvc").size()];
		for (int i = 0; i < ratios.length; i++) {
			ratios[i] = measured.get("webflux").get(i)[1] / measured.get("mvc").get(i)[1];
		}
		System.out.println();
		for (String stack : stacks.keySet()) {
			double[] p99 = measured.get(stack).stream().mapToDouble((p) -> p[1] * 1000).toArray();
			double[] p50 = measured.get(stack).stream().mapToDouble((p) -> p[0] * 1000).toArray();
			System.out.printf("%-7s p99 %s ms, p50 %s ms%n", stack, summary(p99), summary(p50));
		}
		System.out.printf("webflux p99 / mvc p99, per round: %s%n", summary(ratios));
		double[] mvc = percentiles(pooledBefore.get("mvc"), pooledAfter.get("mvc"));
		double[] webflux = percentiles(pooledBefore.get("webflux"), pooledAfter.get("webflux"));
		System.out.printf("pooled over the measured rounds: mvc p99 %.3f ms of %.0f decisions, webflux p99 %.3f ms of "
				+ "%.0f, webflux / mvc %.2f%n", mvc[1] * 1000, mvc[2], webflux[1] * 1000, webflux[2], webflux[1] / mvc[1]);
	}

	private static List<URI> uris(String list) {
		return Arrays.stream(list.split(",")).map(URI::create).toList();
	}

	/**
	 * Send the requests of one client over keep-alive connections, each connection to one instance in turn, and
	 * return how many were admitted.
	 */
	private static int burst(List<URI> instances, int requests, int connections, String client) throws Exception {
		AtomicInteger next = new AtomicInteger();
		AtomicInteger admitted = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(connections);
		try {
			List<Future<?>> senders = new ArrayList<>();
			for (int c = 0; c < connections; c++) {
				URI instance = instances.get(c % instances.size()).resolve("/api/v1/resources");
				HttpClient http = HttpClient.newHttpClient();
				senders.add(threads.submit(() -> {
					HttpRequest request = HttpRequest.newBuilder(instance)
						.header("X-Forwarded-For", client)
						.timeout(Duration.ofSeconds(30))
						.build();
					while (next.getAndIncrement() < requests) {
						if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
							admitted.incrementAndGet();
						}
					}
					return null;
				}));
			}
			for (Future<?> sender : senders) {
				sender.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		return admitted.get();
	}

	/** The decisions' cumulative counts per bucket, summed over the instances and over the timer's tags. */
	private static TreeMap<Double, Double> histogram(List<URI> instances) throws IOException, InterruptedException {
		TreeMap<Double, Double> cumulative = new TreeMap<>();
		HttpClient http = HttpClient.newHttpClient();
		for (URI instance : instances) {
			String scrape = http.send(HttpRequest.newBuilder(instance.resolve("/actuator/prometheus")).build(),
					HttpResponse.BodyHandlers.ofString()).body();
			for (String line : scrape.split("\n")) {
				Matcher bucket = BUCKET.matcher(line.trim());
				if (bucket.matches()) {
					Matcher le = LE.matcher(bucket.group(1));
					if (le.find()) {
						double bound = le.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY
								: Double.parseDouble(le.group(1));
						cumulative.merge(bound, Double.parseDouble(bucket.group(2)), Double::sum);
					}
				}
			}
		}
		return cumulative;
	}

	/**
	 * The 50th and 99th percentiles (the upper bound of the bucket that holds them, in seconds) of the decisions made
	 * between the two readings, and their number.
	 */
	private static double[] percentiles(TreeMap<Double, Double> before, TreeMap<Double, Double> after) {
		double total = after.getOrDefault(Double.POSITIVE_INFINITY, 0.0)
				- before.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
		double p50 = Double.NaN;
		double p99 = Double.NaN;
		for (Map.Entry<Double, Double> bucket : after.entrySet()) {
			double count = bucket.getValue() - before.getOrDefault(bucket.getKey(), 0.0);
			if (Double.isNaN(p50) && count >= 0.50 * total) {
				p50 = bucket.getKey();
			}
			if (Double.isNaN(p99) && count >= 0.99 * total) {
				p99 = bucket.getKey();
			}
		}
		return new double[] { p50, p99, total };
	}

	private static String summary(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		double median = (sorted.length % 2 == 1) ? sorted[sorted.length / 2]
				: (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
		return String.format("median %.3f (%.3f to %.3f)", median, sorted[0], sorted[sorted.length - 1]);
	}

}
