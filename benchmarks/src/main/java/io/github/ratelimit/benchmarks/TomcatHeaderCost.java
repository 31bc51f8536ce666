package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;

/**
 * What three response headers cost in Tomcat itself, with no rate limiter and no Spring: an embedded Tomcat on
 * 127.0.0.1 with two servlets that write the sample app's JSON body, {@code /plain} without headers of its own and
 * {@code /headers} with {@code RateLimit-Limit}, {@code RateLimit-Remaining} and {@code RateLimit-Reset}, valued as
 * the rate limiter values them. Measured with {@link HttpOverhead}:
 * <p>
 * {@snippet lang = "shell" :
 * benchmarks/tomcat-header-cost.sh
 * }
 * Runs until killed.
 */
public final class TomcatHeaderCost {

	private static final byte[] BODY = "{\"status\":\"success\",\"data\":\"the resource payload goes here\"}"
		.getBytes(StandardCharsets.UTF_8);

	private TomcatHeaderCost() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 1) {
			System.err.println("Usage: TomcatHeaderCost <port>");
			System.exit(2);
		}
		Path baseDir = Files.createTempDirectory("tomcat-header-cost");
		Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(baseDir)));
		Tomcat tomcat = new Tomcat();
		tomcat.setBaseDir(baseDir.toString());
		tomcat.setHostname("127.0.0.1");
		tomcat.setPort(Integer.parseInt(args[0]));
		tomcat.getConnector().setProperty("address", "127.0.0.1");
		Context context = tomcat.addContext("", null);
		Tomcat.addServlet(context, "plain", new JsonServlet(false));
		context.addServletMappingDecoded("/plain", "plain");
		Tomcat.addServlet(context, "headers", new JsonServlet(true));
		context.addServletMappingDecoded("/headers", "headers");
		tomcat.start();
		tomcat.getServer().await();
	}

	private static void delete(Path directory) {
		try (Stream<Path> paths = Files.walk(directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// Left in the temporary directory.
		}
	}

	private static final class JsonServlet extends HttpServlet {

		private final boolean headers;

		private final AtomicLong requests = new AtomicLong();

		JsonServlet(boolean headers) {
			this.headers = headers;
		}

		@Override
		protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
			if (this.headers) {
				long count = this.requests.incrementAndGet();
				response.setHeader("RateLimit-Limit", Long.toString(2_000_000_000L));
				response.setHeader("RateLimit-Remaining", Long.toString(2_000_000_000L - count));
				response.setHeader("RateLimit-Reset", Long.toString(60 - (count % 60)));
			}
			response.setContentType("application/json");
			response.getOutputStream().write(BODY);
		}

	}

}
