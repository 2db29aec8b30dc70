/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * ps-lite's SimpleApp over bxps: a request of a head (int) and a body
 * (string) to one node or a group, answered by every receiver's request
 * handle; the requester's response handle sees each answer, Wait() all.
 */
#ifndef BX_PS_SIMPLE_APP_H_
#define BX_PS_SIMPLE_APP_H_

#include <bxps.h>

#include <cstring>
#include <functional>
#include <string>

#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"

namespace ps {

/* A request or an answer as a handle sees it. */
struct SimpleData {
  int head = 0;
  std::string body;
  int sender = 0;
  int timestamp = 0;
  int customer_id = 0;
  /* bx: which part of the sender's request (echoed in the answer) */
  uint32_t part_ = 0;
};

class SimpleApp {
 public:
  using Handle = std::function<void(const SimpleData& recved, SimpleApp* app)>;

  explicit SimpleApp(int app_id, int customer_id = 0)
      : app_id_(app_id), customer_id_(customer_id) {
    request_handle_ = [](const SimpleData& recved, SimpleApp* app) {
      app->Response(recved);
    };
    response_handle_ = [](const SimpleData&, SimpleApp*) {};
    int ret = bxps_set_handler(Postoffice::Get()->node(), app_id_, &OnRequest, this, 1);
    CHECK_EQ(ret, 0) << "app " << app_id_ << " has a handler already";
  }

  virtual ~SimpleApp() {
    if (Postoffice::Get()->started())
      bxps_set_handler(Postoffice::Get()->node(), app_id_, nullptr, nullptr, 0);
  }

  /* Send to node @recv_id or group; returns the timestamp for Wait(). */
  virtual int Request(int req_head, const std::string& req_body, int recv_id) {
    struct bxps_opts o;
    std::memset(&o, 0, sizeof(o));
    o.app = app_id_;
    o.customer = customer_id_;
    o.each = &OnResponse;
    o.arg = this;
    int64_t id = bxps_request(Postoffice::Get()->node(), &o, req_head, req_body.data(),
                              static_cast<uint32_t>(req_body.size()), recv_id);
    CHECK_GE(id, 0) << "bxps_request: " << std::strerror(static_cast<int>(-id));
    return static_cast<int>(id);
  }

  /* Wait until every receiver answered; 0 or -errno (ps-lite: void). */
  virtual int Wait(int timestamp) {
    return bxps_wait(Postoffice::Get()->node(), timestamp, nullptr);
  }

  virtual void Response(const SimpleData& recv_req, const std::string& res_body = "") {
    struct bxps_req r;
    std::memset(&r, 0, sizeof(r));
    r.sender = recv_req.sender;
    r.id = recv_req.timestamp;
    r.app = app_id_;
    r.customer = recv_req.customer_id;
    r.cmd = recv_req.head;
    r.simple = 1;
    r.part = recv_req.part_;
    bxps_respond(Postoffice::Get()->node(), &r, nullptr, res_body.data(),
                 static_cast<uint32_t>(res_body.size()));
  }

  virtual void set_request_handle(const Handle& request_handle) {
    CHECK(request_handle) << "invalid request handle";
    request_handle_ = request_handle;
  }
  virtual void set_response_handle(const Handle& response_handle) {
    CHECK(response_handle) << "invalid response handle";
    response_handle_ = response_handle;
  }

  int app_id() const { return app_id_; }
  int customer_id() const { return customer_id_; }

 protected:
  SimpleApp() {}
  int app_id_ = 0;
  int customer_id_ = 0;

 private:
  static SimpleData ToData(const struct bxps_req* r) {
    SimpleData d;
    d.head = r->cmd;
    d.body.assign(static_cast<const char*>(r->body), r->blen);
    d.sender = r->sender;
    d.timestamp = static_cast<int>(r->id);
    d.customer_id = r->customer;
    d.part_ = r->part;
    return d;
  }
  static void OnRequest(struct bxps* n, const struct bxps_req* r, void* arg) {
    SimpleApp* app = static_cast<SimpleApp*>(arg);
    SimpleData d = ToData(r);
    bxps_req_release(n, r->buf);
    if (!r->simple) {
      LOG(WARNING) << "app " << app->app_id_ << ": a key-value request, refused";
      bxps_respond_err(n, r, -EPROTO);
      return;
    }
    app->request_handle_(d, app);
  }
  static void OnResponse(struct bxps*, const struct bxps_req* r, void* arg) {
    SimpleApp* app = static_cast<SimpleApp*>(arg);
    app->response_handle_(ToData(r), app);
  }

  Handle request_handle_;
  Handle response_handle_;
};

}  // namespace ps

#endif  // BX_PS_SIMPLE_APP_H_
