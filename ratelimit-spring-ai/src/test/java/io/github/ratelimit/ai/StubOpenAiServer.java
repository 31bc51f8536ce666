package io.github.ratelimit.ai;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A model server speaking OpenAI's chat completions API on a real port, as Spring AI's OpenAI starter calls it:
 * answered at once, or streamed as server-sent events whose last chunk carries the usage when the request asks for it
 * ({@code stream_options.include_usage}). Each answer is "Hello" and
 * reports {@link #totalTokens} tokens; a streamed one pauses before its usage, so that a client can leave midway.
 */
final class StubOpenAiServer implements AutoCloseable {

	private final HttpServer server;

	/** The chat completions asked for. */
	final AtomicInteger completions = new AtomicInteger();

	/** The tokens each answer reports it cost. */
	volatile int totalTokens = 300;

	private StubOpenAiServer(HttpServer server) {
		this.server = server;
	}

	static StubOpenAiServer start() throws IOException {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		StubOpenAiServer stub = new StubOpenAiServer(server);
		server.createContext("/v1/chat/completions", stub::complete);
		server.setExecutor(Executors.newCachedThreadPool());
		server.start();
		return stub;
	}

	/** The base URL to give {@code spring.ai.openai.base-url}. */
	String baseUrl() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	private void complete(HttpExchange exchange) throws IOException {
		String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
		this.completions.incrementAndGet();
		int total = this.totalTokens;
		String usage = "{\"prompt_tokens\":" + (total / 3) + ",\"completion_tokens\":" + (total - total / 3)
				+ ",\"total_tokens\":" + total + "}";
		if (body.replace(" ", "").contains("\"stream\":true")) {
			exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
			exchange.sendResponseHeaders(200, 0);
			try (OutputStream out = exchange.getResponseBody()) {
				event(out, chunk("{\"role\":\"assistant\",\"content\":\"Hel\"}", "null"));
				event(out, chunk("{\"content\":\"lo\"}", "\"stop\""));
				sleep(500);
				if (body.replace(" ", "").contains("\"include_usage\":true")) { // as OpenAI: only when asked
					event(out, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
							+ "\"model\":\"gpt-test\",\"choices\":[],\"usage\":" + usage + "}");
				}
				event(out, "[DONE]");
			}
			catch (IOException ex) {
				// The client left midway.
			}
			return;
		}
		byte[] answer = ("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,"
				+ "\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
				+ "\"content\":\"Hello\"},\"finish_reason\":\"stop\",\"logprobs\":null}],\"usage\":" + usage + "}")
			.getBytes(StandardCharsets.UTF_8);
		exchange.getResponseHeaders().set("Content-Type", "application/json");
		exchange.sendResponseHeaders(200, answer.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(answer);
		}
	}

	private static String chunk(String delta, String finishReason) {
		return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-test\","
				+ "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":" + finishReason + "}]}";
	}

	private static void event(OutputStream out, String data) throws IOException {
		out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
		out.flush();
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
