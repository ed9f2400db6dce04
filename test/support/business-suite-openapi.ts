/**
 * A 300-operation OpenAPI 3 document, made deterministically: the API of an imaginary
 * business suite with 30 resources (people, money, sales, logistics, work, facilities), each
 * with list / create / read / update / delete and five actions of its own, all described as a
 * real API would be. Many actions share verbs across resources (cancel, approve, archive,
 * close), as in real APIs, which is what makes choosing among them hard. Used by the tool
 * selection test and `npm run bench -- tools`.
 */
import type { OpenApiDocument } from "../../workflows/tools/openapi.ts";

type FieldType = "string" | "integer" | "number" | "boolean";
/** name, type, description */
type Field = readonly [string, FieldType, string];
/** operationId, method, path under the item (`/terminate`), summary, body fields */
type Action = readonly [string, "get" | "post" | "put" | "delete", string, string, (readonly Field[])?];

interface Resource {
  readonly path: string;
  /** The noun in operation ids: `Employee` → listEmployees, getEmployee. */
  readonly singular: string;
  readonly plural: string;
  readonly about: string;
  readonly fields: readonly Field[];
  readonly actions: readonly Action[];
}

const note: Field = ["note", "string", "Free text kept with the change."];
const reason: Field = ["reason", "string", "Why, for the audit log."];

const RESOURCES: readonly Resource[] = [
  {
    path: "/employees",
    singular: "Employee",
    plural: "Employees",
    about: "people employed by the company, with their job title, department and manager",
    fields: [
      ["first_name", "string", "Given name."],
      ["last_name", "string", "Family name."],
      ["email", "string", "Work email address."],
      ["job_title", "string", "Current job title."],
      ["department_id", "integer", "The department the employee belongs to."],
    ],
    actions: [
      [
        "terminateEmployee",
        "post",
        "/terminate",
        "Terminate an employee's contract: they leave the company (dismissal or resignation).",
        [["last_day", "string", "Last working day, YYYY-MM-DD."], reason],
      ],
      [
        "promoteEmployee",
        "post",
        "/promote",
        "Promote an employee to a new job title with a salary raise.",
        [
          ["job_title", "string", "The new title."],
          ["salary", "number", "The new yearly salary."],
        ],
      ],
      ["transferEmployee", "post", "/transfer", "Move an employee to another department.", [["department_id", "integer", "The department to move to."]]],
      ["setEmployeeManager", "put", "/manager", "Set who an employee reports to.", [["manager_id", "integer", "The employee id of the new manager."]]],
      ["listDirectReports", "get", "/reports", "List the employees who report directly to this manager."],
    ],
  },
  {
    path: "/departments",
    singular: "Department",
    plural: "Departments",
    about: "organisational units such as Sales or Engineering",
    fields: [
      ["name", "string", "Department name."],
      ["cost_center", "string", "Accounting cost center code."],
      ["head_id", "integer", "Employee id of the department head."],
    ],
    actions: [
      ["listDepartmentMembers", "get", "/members", "List everyone who works in a department."],
      [
        "setDepartmentBudget",
        "put",
        "/budget",
        "Set a department's yearly budget.",
        [
          ["amount", "number", "Budget in the company currency."],
          ["year", "integer", "Fiscal year."],
        ],
      ],
      [
        "mergeDepartments",
        "post",
        "/merge",
        "Merge another department into this one; its members move here.",
        [["source_id", "integer", "The department merged in and removed."]],
      ],
      ["archiveDepartment", "post", "/archive", "Archive a department that no longer exists; its history is kept."],
      ["setDepartmentHead", "put", "/head", "Appoint the head of a department.", [["employee_id", "integer", "The new head."]]],
    ],
  },
  {
    path: "/candidates",
    singular: "Candidate",
    plural: "Candidates",
    about: "job applicants in the hiring pipeline",
    fields: [
      ["name", "string", "Full name."],
      ["email", "string", "Contact email."],
      ["job_posting_id", "integer", "The job applied for."],
      ["stage", "string", "Pipeline stage: applied, screening, interview, offer, hired, rejected."],
    ],
    actions: [
      ["advanceCandidate", "post", "/advance", "Move a candidate to the next stage of the hiring pipeline."],
      ["rejectCandidate", "post", "/reject", "Reject an applicant and send them the rejection email.", [reason]],
      [
        "scheduleInterview",
        "post",
        "/interviews",
        "Schedule a job interview with a candidate.",
        [
          ["starts_at", "string", "Date and time, ISO 8601."],
          ["interviewer_ids", "string", "Comma-separated employee ids."],
        ],
      ],
      [
        "makeOffer",
        "post",
        "/offer",
        "Send a job offer to a candidate with salary and start date.",
        [
          ["salary", "number", "Offered yearly salary."],
          ["start_date", "string", "YYYY-MM-DD."],
        ],
      ],
      ["hireCandidate", "post", "/hire", "Hire a candidate who accepted the offer: creates their employee record."],
    ],
  },
  {
    path: "/job-postings",
    singular: "JobPosting",
    plural: "JobPostings",
    about: "open positions advertised to applicants",
    fields: [
      ["title", "string", "Job title."],
      ["location", "string", "Office or remote."],
      ["salary_range", "string", "Advertised salary range."],
    ],
    actions: [
      ["publishJobPosting", "post", "/publish", "Publish a vacancy on the careers site."],
      ["closeJobPosting", "post", "/close", "Close a vacancy: no more applications are accepted."],
      ["duplicateJobPosting", "post", "/duplicate", "Copy a job posting as a new draft."],
      ["listApplicants", "get", "/applicants", "List the candidates who applied to a vacancy."],
      ["shareJobPosting", "post", "/share", "Share a vacancy on external job boards such as LinkedIn.", [["boards", "string", "Comma-separated board names."]]],
    ],
  },
  {
    path: "/timesheets",
    singular: "Timesheet",
    plural: "Timesheets",
    about: "hours worked by an employee in a week, per project",
    fields: [
      ["employee_id", "integer", "Whose hours."],
      ["week", "string", "ISO week, e.g. 2024-W12."],
      ["hours", "number", "Hours worked."],
      ["project_id", "integer", "Project the hours go to."],
    ],
    actions: [
      ["submitTimesheet", "post", "/submit", "Submit a week's hours for approval."],
      ["approveTimesheet", "post", "/approve", "Approve the hours on a submitted timesheet."],
      ["rejectTimesheet", "post", "/reject", "Send a timesheet back to the employee for corrections.", [reason]],
      ["exportTimesheet", "get", "/export", "Export a timesheet as a CSV file."],
      ["lockTimesheet", "post", "/lock", "Lock a timesheet so its hours can no longer change (after payroll)."],
    ],
  },
  {
    path: "/leave-requests",
    singular: "LeaveRequest",
    plural: "LeaveRequests",
    about: "vacation, sick leave and other time off requested by employees",
    fields: [
      ["employee_id", "integer", "Who is away."],
      ["kind", "string", "vacation, sick, parental or unpaid."],
      ["from", "string", "First day off, YYYY-MM-DD."],
      ["to", "string", "Last day off, YYYY-MM-DD."],
    ],
    actions: [
      ["approveLeaveRequest", "post", "/approve", "Approve a time-off request."],
      ["denyLeaveRequest", "post", "/deny", "Deny a time-off request.", [reason]],
      ["cancelLeaveRequest", "post", "/cancel", "Cancel a time-off request the employee no longer needs."],
      ["getLeaveBalance", "get", "/balance", "How many vacation days the requesting employee has left this year."],
      ["listLeaveCalendar", "get", "/calendar", "Who else is off during the same days (team absence calendar)."],
    ],
  },
  {
    path: "/payroll-runs",
    singular: "PayrollRun",
    plural: "PayrollRuns",
    about: "monthly salary payments to all employees",
    fields: [
      ["period", "string", "Month paid, YYYY-MM."],
      ["pay_date", "string", "Day the salaries are paid."],
    ],
    actions: [
      ["calculatePayroll", "post", "/calculate", "Calculate gross pay, taxes and net salaries for a payroll run."],
      ["approvePayroll", "post", "/approve", "Approve a calculated payroll run for payment."],
      ["executePayroll", "post", "/execute", "Pay out the salaries of an approved payroll run by bank transfer."],
      ["listPayslips", "get", "/payslips", "List the payslips of a payroll run, one per employee."],
      ["reversePayroll", "post", "/reverse", "Reverse a payroll run paid by mistake.", [reason]],
    ],
  },
  {
    path: "/expenses",
    singular: "Expense",
    plural: "Expenses",
    about: "business expenses employees paid themselves and claim back",
    fields: [
      ["employee_id", "integer", "Who paid."],
      ["amount", "number", "Amount paid."],
      ["currency", "string", "ISO currency code."],
      ["category", "string", "travel, meals, equipment, other."],
    ],
    actions: [
      ["submitExpense", "post", "/submit", "Submit an expense claim for approval."],
      ["approveExpense", "post", "/approve", "Approve an expense claim."],
      ["reimburseExpense", "post", "/reimburse", "Pay an approved expense back to the employee."],
      ["attachReceipt", "post", "/receipt", "Attach a photo of the receipt to an expense claim.", [["url", "string", "Where the uploaded image is."]]],
      ["flagExpense", "post", "/flag", "Flag a suspicious expense claim for audit.", [reason]],
    ],
  },
  {
    path: "/invoices",
    singular: "Invoice",
    plural: "Invoices",
    about: "bills sent to customers",
    fields: [
      ["customer_id", "integer", "Who is billed."],
      ["amount_due", "number", "Total to pay."],
      ["due_date", "string", "YYYY-MM-DD."],
      ["status", "string", "draft, sent, paid, overdue or void."],
    ],
    actions: [
      ["sendInvoice", "post", "/send", "Email an invoice to the customer."],
      [
        "markInvoicePaid",
        "post",
        "/mark-paid",
        "Record that an invoice was paid outside the system, e.g. by bank transfer.",
        [["paid_on", "string", "YYYY-MM-DD."]],
      ],
      ["voidInvoice", "post", "/void", "Void an invoice issued by mistake.", [reason]],
      ["downloadInvoicePdf", "get", "/pdf", "Download an invoice as a PDF file."],
      ["sendInvoiceReminder", "post", "/remind", "Send a payment reminder for an overdue invoice."],
    ],
  },
  {
    path: "/payments",
    singular: "Payment",
    plural: "Payments",
    about: "card and bank payments received from customers",
    fields: [
      ["invoice_id", "integer", "The invoice paid."],
      ["amount", "number", "Amount received."],
      ["method", "string", "card, transfer or direct debit."],
    ],
    actions: [
      [
        "refundPayment",
        "post",
        "/refund",
        "Refund a payment, fully or in part, to the customer's card.",
        [["amount", "number", "Amount to refund; default all."]],
      ],
      ["capturePayment", "post", "/capture", "Capture an authorised card payment."],
      ["retryPayment", "post", "/retry", "Retry a failed card charge."],
      ["getPaymentReceipt", "get", "/receipt", "Get the receipt of a payment."],
      ["disputePayment", "post", "/dispute", "Respond to a chargeback dispute opened by the cardholder's bank.", [["evidence", "string", "Evidence text."]]],
    ],
  },
  {
    path: "/customers",
    singular: "Customer",
    plural: "Customers",
    about: "companies and people who buy from us",
    fields: [
      ["name", "string", "Customer name."],
      ["email", "string", "Billing email."],
      ["country", "string", "ISO country code."],
      ["tier", "string", "standard, gold or platinum."],
    ],
    actions: [
      [
        "mergeCustomers",
        "post",
        "/merge",
        "Merge a duplicate customer record into this one.",
        [["duplicate_id", "integer", "The record merged in and removed."]],
      ],
      ["listCustomerOrders", "get", "/orders", "List the orders a customer has placed."],
      ["addCustomerNote", "post", "/notes", "Add a note to a customer's account.", [["text", "string", "The note."]]],
      ["setCreditLimit", "put", "/credit-limit", "Set how much a customer may owe before new orders are held.", [["limit", "number", "Credit limit."]]],
      ["exportCustomerData", "get", "/export", "Export everything stored about a customer (GDPR data access request)."],
    ],
  },
  {
    path: "/orders",
    singular: "Order",
    plural: "Orders",
    about: "sales orders placed by customers",
    fields: [
      ["customer_id", "integer", "Who ordered."],
      ["total", "number", "Order total."],
      ["status", "string", "pending, paid, fulfilled, cancelled or on hold."],
    ],
    actions: [
      ["cancelOrder", "post", "/cancel", "Cancel a customer's order before it ships.", [reason]],
      [
        "applyDiscount",
        "post",
        "/discount",
        "Apply a discount code or percentage to an order.",
        [
          ["code", "string", "Discount code."],
          ["percent", "number", "Or a percentage off."],
        ],
      ],
      [
        "addOrderItem",
        "post",
        "/items",
        "Add a product to an order.",
        [
          ["product_id", "integer", "The product."],
          ["quantity", "integer", "How many."],
        ],
      ],
      ["fulfillOrder", "post", "/fulfill", "Mark an order as picked, packed and ready to ship."],
      ["holdOrder", "post", "/hold", "Put an order on hold, e.g. for a fraud check.", [reason]],
    ],
  },
  {
    path: "/products",
    singular: "Product",
    plural: "Products",
    about: "items in the sales catalogue",
    fields: [
      ["name", "string", "Product name."],
      ["sku", "string", "Stock keeping unit code."],
      ["price", "number", "List price."],
      ["description", "string", "Shown in the shop."],
    ],
    actions: [
      ["publishProduct", "post", "/publish", "Make a product visible in the online shop."],
      ["discontinueProduct", "post", "/discontinue", "Stop selling a product; remaining stock can still be sold off."],
      [
        "setProductPrice",
        "put",
        "/price",
        "Change a product's list price.",
        [
          ["price", "number", "The new price."],
          ["currency", "string", "ISO currency code."],
        ],
      ],
      ["listProductReviews", "get", "/reviews", "List what customers wrote about a product, with star ratings."],
      ["uploadProductImage", "post", "/images", "Upload a picture of a product.", [["url", "string", "Where the image is."]]],
    ],
  },
  {
    path: "/warehouses",
    singular: "Warehouse",
    plural: "Warehouses",
    about: "buildings where stock is kept",
    fields: [
      ["name", "string", "Warehouse name."],
      ["city", "string", "Where it is."],
      ["capacity", "integer", "Pallet places."],
    ],
    actions: [
      ["listWarehouseStock", "get", "/stock", "How many units of each product are in stock in a warehouse."],
      [
        "transferStock",
        "post",
        "/transfers",
        "Move units of a product from this warehouse to another.",
        [
          ["product_id", "integer", "The product."],
          ["quantity", "integer", "Units."],
          ["to_warehouse_id", "integer", "Destination."],
        ],
      ],
      ["startInventoryCount", "post", "/counts", "Start a physical inventory count (stocktake) of a warehouse."],
      ["setWarehouseCapacity", "put", "/capacity", "Change how many pallets a warehouse can hold.", [["capacity", "integer", "Pallet places."]]],
      ["closeWarehouse", "post", "/close", "Close a warehouse; its stock must be moved first."],
    ],
  },
  {
    path: "/shipments",
    singular: "Shipment",
    plural: "Shipments",
    about: "parcels sent to customers by carrier",
    fields: [
      ["order_id", "integer", "The order shipped."],
      ["carrier", "string", "DHL, UPS, FedEx…"],
      ["tracking_number", "string", "The carrier's tracking number."],
    ],
    actions: [
      ["trackShipment", "get", "/tracking", "Where a parcel is now: the carrier's tracking events."],
      ["cancelShipment", "post", "/cancel", "Cancel a shipment the carrier has not picked up yet."],
      ["printShippingLabel", "get", "/label", "Get the shipping label to print and stick on the parcel."],
      ["changeShippingAddress", "put", "/address", "Change the delivery address of a parcel.", [["address", "string", "The new address."]]],
      ["markShipmentDelivered", "post", "/delivered", "Record that a parcel was delivered."],
    ],
  },
  {
    path: "/returns",
    singular: "Return",
    plural: "Returns",
    about: "products customers send back (RMA)",
    fields: [
      ["order_id", "integer", "The order returned from."],
      ["items", "string", "What comes back."],
      ["reason", "string", "Why the customer returns it."],
    ],
    actions: [
      ["approveReturn", "post", "/approve", "Accept a customer's request to send products back."],
      ["rejectReturn", "post", "/reject", "Refuse a return request, e.g. past the return window.", [reason]],
      ["receiveReturn", "post", "/receive", "Record that the returned parcel arrived at the warehouse."],
      ["refundReturn", "post", "/refund", "Give the customer their money back for returned items."],
      ["createReturnLabel", "post", "/label", "Make a prepaid return shipping label for the customer."],
    ],
  },
  {
    path: "/suppliers",
    singular: "Supplier",
    plural: "Suppliers",
    about: "vendors we buy goods and services from",
    fields: [
      ["name", "string", "Supplier name."],
      ["tax_id", "string", "VAT or tax number."],
      ["email", "string", "Sales contact."],
    ],
    actions: [
      ["rateSupplier", "post", "/ratings", "Rate a vendor's quality and delivery times.", [["stars", "integer", "1 to 5."], note]],
      ["listSupplierPurchaseOrders", "get", "/purchase-orders", "List the purchase orders sent to a vendor."],
      ["blockSupplier", "post", "/block", "Block a vendor: no new purchase orders may go to them.", [reason]],
      ["verifySupplierTaxId", "post", "/verify-tax-id", "Check a vendor's VAT number with the tax authority."],
      ["contactSupplier", "post", "/messages", "Send a message to a vendor's sales contact.", [["text", "string", "The message."]]],
    ],
  },
  {
    path: "/purchase-orders",
    singular: "PurchaseOrder",
    plural: "PurchaseOrders",
    about: "orders we place with suppliers",
    fields: [
      ["supplier_id", "integer", "Who we buy from."],
      ["lines", "string", "Products and quantities."],
      ["total", "number", "Order value."],
    ],
    actions: [
      ["approvePurchaseOrder", "post", "/approve", "Approve a purchase order above the spending limit."],
      ["sendPurchaseOrder", "post", "/send", "Send an approved purchase order to the supplier."],
      ["receiveGoods", "post", "/receipts", "Record the goods delivered against a purchase order.", [["quantity", "integer", "Units received."]]],
      ["cancelPurchaseOrder", "post", "/cancel", "Cancel a purchase order with the supplier.", [reason]],
      ["closePurchaseOrder", "post", "/close", "Close a purchase order once everything arrived and was invoiced."],
    ],
  },
  {
    path: "/projects",
    singular: "Project",
    plural: "Projects",
    about: "client and internal projects with a budget and a deadline",
    fields: [
      ["name", "string", "Project name."],
      ["client", "string", "Customer the work is for."],
      ["deadline", "string", "YYYY-MM-DD."],
      ["budget", "number", "Budget."],
    ],
    actions: [
      ["archiveProject", "post", "/archive", "Archive a finished project."],
      [
        "addProjectMember",
        "post",
        "/members",
        "Add an employee to a project team.",
        [
          ["employee_id", "integer", "Who joins."],
          ["role", "string", "Their role."],
        ],
      ],
      ["getProjectBudgetReport", "get", "/budget-report", "Budget report of a project: money spent versus planned."],
      ["setProjectDeadline", "put", "/deadline", "Move a project's deadline.", [["deadline", "string", "YYYY-MM-DD."]]],
      ["cloneProject", "post", "/clone", "Start a new project as a copy of this one, with its tasks."],
    ],
  },
  {
    path: "/tasks",
    singular: "Task",
    plural: "Tasks",
    about: "to-do items within projects",
    fields: [
      ["title", "string", "What to do."],
      ["project_id", "integer", "The project."],
      ["assignee_id", "integer", "Who does it."],
      ["due_date", "string", "YYYY-MM-DD."],
    ],
    actions: [
      ["assignTask", "post", "/assign", "Give a to-do item to someone.", [["assignee_id", "integer", "Who does it."]]],
      ["completeTask", "post", "/complete", "Mark a to-do item as done."],
      ["commentOnTask", "post", "/comments", "Write a comment on a to-do item.", [["text", "string", "The comment."]]],
      ["setTaskPriority", "put", "/priority", "Set the priority of a to-do item.", [["priority", "string", "low, normal, high or urgent."]]],
      ["moveTask", "post", "/move", "Move a to-do item to another project.", [["project_id", "integer", "The destination project."]]],
    ],
  },
  {
    path: "/tickets",
    singular: "Ticket",
    plural: "Tickets",
    about: "customer support requests",
    fields: [
      ["subject", "string", "Subject line."],
      ["customer_id", "integer", "Who asked."],
      ["priority", "string", "low, normal, high or urgent."],
      ["status", "string", "open, pending, solved or closed."],
    ],
    actions: [
      ["assignTicket", "post", "/assign", "Assign a support ticket to a support agent.", [["agent_id", "integer", "The agent."]]],
      ["escalateTicket", "post", "/escalate", "Escalate a support ticket to second-level support.", [reason]],
      ["closeTicket", "post", "/close", "Close a solved support ticket."],
      ["reopenTicket", "post", "/reopen", "Reopen a closed support ticket."],
      ["replyToTicket", "post", "/replies", "Answer the customer on a support ticket.", [["text", "string", "The answer."]]],
    ],
  },
  {
    path: "/articles",
    singular: "Article",
    plural: "Articles",
    about: "help-center knowledge base articles",
    fields: [
      ["title", "string", "Article title."],
      ["body", "string", "Article text, Markdown."],
      ["language", "string", "Language code."],
    ],
    actions: [
      ["publishArticle", "post", "/publish", "Publish a help-center article."],
      ["unpublishArticle", "post", "/unpublish", "Take a help-center article offline."],
      [
        "translateArticle",
        "post",
        "/translations",
        "Translate a help-center article into another language.",
        [["language", "string", "Target language code."]],
      ],
      ["listArticleVersions", "get", "/versions", "List the earlier versions of a help-center article."],
      ["getArticleFeedback", "get", "/feedback", "How many readers found a help-center article helpful."],
    ],
  },
  {
    path: "/contracts",
    singular: "Contract",
    plural: "Contracts",
    about: "agreements with customers and suppliers",
    fields: [
      ["title", "string", "Contract title."],
      ["party", "string", "The other party."],
      ["ends_on", "string", "End date, YYYY-MM-DD."],
      ["value", "number", "Contract value."],
    ],
    actions: [
      ["signContract", "post", "/sign", "Sign a contract on the company's behalf."],
      ["renewContract", "post", "/renew", "Renew a contract for another term.", [["years", "integer", "Length of the new term."]]],
      ["endContract", "post", "/end", "End an agreement early, giving notice to the other party.", [reason]],
      ["sendContractForSignature", "post", "/signature-requests", "Send a contract to the other party for e-signature.", [["email", "string", "Who signs."]]],
      ["downloadContract", "get", "/document", "Download the signed agreement document."],
    ],
  },
  {
    path: "/meetings",
    singular: "Meeting",
    plural: "Meetings",
    about: "calendar meetings",
    fields: [
      ["title", "string", "Meeting title."],
      ["starts_at", "string", "ISO 8601."],
      ["duration_minutes", "integer", "Length."],
      ["room_id", "integer", "Where."],
    ],
    actions: [
      ["cancelMeeting", "post", "/cancel", "Cancel a meeting and tell the attendees."],
      ["inviteAttendees", "post", "/attendees", "Invite more people to a meeting.", [["emails", "string", "Comma-separated emails."]]],
      ["rescheduleMeeting", "post", "/reschedule", "Move a meeting to another time.", [["starts_at", "string", "ISO 8601."]]],
      ["getMeetingMinutes", "get", "/minutes", "The minutes (notes) taken at a meeting."],
      ["addMeetingAgendaItem", "post", "/agenda", "Add a topic to a meeting's agenda.", [["topic", "string", "The topic."]]],
    ],
  },
  {
    path: "/rooms",
    singular: "Room",
    plural: "Rooms",
    about: "meeting rooms in the offices",
    fields: [
      ["name", "string", "Room name."],
      ["seats", "integer", "How many people fit."],
      ["floor", "integer", "Floor."],
    ],
    actions: [
      [
        "bookRoom",
        "post",
        "/bookings",
        "Reserve a meeting room for a time slot.",
        [
          ["from", "string", "ISO 8601."],
          ["to", "string", "ISO 8601."],
        ],
      ],
      ["releaseRoomBooking", "delete", "/bookings/{bookingId}", "Release a room reservation that is no longer needed."],
      ["getRoomAvailability", "get", "/availability", "When a meeting room is free today."],
      ["setRoomOutOfService", "post", "/out-of-service", "Take a room out of service, e.g. for repairs.", [reason]],
      ["listRoomBookings", "get", "/bookings", "List the reservations of a meeting room."],
    ],
  },
  {
    path: "/assets",
    singular: "Asset",
    plural: "Assets",
    about: "IT equipment: laptops, phones and monitors",
    fields: [
      ["kind", "string", "laptop, phone, monitor…"],
      ["serial_number", "string", "Manufacturer serial number."],
      ["holder_id", "integer", "Employee who has it."],
    ],
    actions: [
      ["assignAsset", "post", "/assign", "Hand a laptop, phone or other device to an employee.", [["employee_id", "integer", "Who gets it."]]],
      ["returnAsset", "post", "/return", "Record that an employee gave a device back to IT."],
      ["reportAssetLost", "post", "/lost", "Report a device as lost or stolen; it is locked remotely."],
      ["scheduleAssetMaintenance", "post", "/maintenance", "Send a device for repair or maintenance.", [note]],
      ["getAssetDepreciation", "get", "/depreciation", "The book value of a device after depreciation."],
    ],
  },
  {
    path: "/vehicles",
    singular: "Vehicle",
    plural: "Vehicles",
    about: "company cars and vans",
    fields: [
      ["plate", "string", "License plate."],
      ["model", "string", "Make and model."],
      ["mileage", "integer", "Odometer, km."],
    ],
    actions: [
      ["checkOutVehicle", "post", "/check-out", "Take a company car out for a trip.", [["driver_id", "integer", "Who drives."]]],
      ["checkInVehicle", "post", "/check-in", "Bring a company car back after a trip."],
      ["logMileage", "post", "/mileage", "Record the kilometres driven on a trip.", [["km", "integer", "Kilometres driven."]]],
      ["scheduleVehicleService", "post", "/service", "Book a company car in for servicing at the garage.", [["date", "string", "YYYY-MM-DD."]]],
      [
        "logFuel",
        "post",
        "/fuel",
        "Record a refuelling: litres and cost.",
        [
          ["litres", "number", "Litres."],
          ["cost", "number", "Cost."],
        ],
      ],
    ],
  },
  {
    path: "/campaigns",
    singular: "Campaign",
    plural: "Campaigns",
    about: "email and advertising marketing campaigns",
    fields: [
      ["name", "string", "Campaign name."],
      ["channel", "string", "email, search, social."],
      ["budget", "number", "Spend limit."],
    ],
    actions: [
      ["launchCampaign", "post", "/launch", "Start sending a marketing campaign."],
      ["pauseCampaign", "post", "/pause", "Pause a running marketing campaign."],
      ["getCampaignStats", "get", "/stats", "Opens, clicks and conversions of a marketing campaign."],
      ["duplicateCampaign", "post", "/duplicate", "Copy a marketing campaign as a new draft."],
      ["addCampaignSegment", "post", "/segments", "Target another audience segment with a campaign.", [["segment_id", "integer", "The segment."]]],
    ],
  },
  {
    path: "/subscriptions",
    singular: "Subscription",
    plural: "Subscriptions",
    about: "customers' recurring plans, billed monthly or yearly",
    fields: [
      ["customer_id", "integer", "Who subscribes."],
      ["plan", "string", "basic, pro or enterprise."],
      ["renews_on", "string", "Next billing date."],
    ],
    actions: [
      ["cancelSubscription", "post", "/cancel", "Cancel a customer's recurring plan at the end of the billing period."],
      ["changeSubscriptionPlan", "post", "/change-plan", "Upgrade or downgrade a customer's plan.", [["plan", "string", "basic, pro or enterprise."]]],
      ["pauseSubscription", "post", "/pause", "Pause billing of a subscription for a while.", [["until", "string", "YYYY-MM-DD."]]],
      ["resumeSubscription", "post", "/resume", "Resume a paused subscription."],
      ["getSubscriptionUsage", "get", "/usage", "Usage of a subscription this billing period (seats, API calls)."],
    ],
  },
  {
    path: "/webhooks",
    singular: "Webhook",
    plural: "Webhooks",
    about: "HTTP callbacks that notify other systems of events",
    fields: [
      ["url", "string", "Where events are posted."],
      ["events", "string", "Comma-separated event names."],
      ["active", "boolean", "Whether deliveries are made."],
    ],
    actions: [
      ["pingWebhook", "post", "/ping", "Send a test event to a webhook URL."],
      ["rotateWebhookSecret", "post", "/rotate-secret", "Make a new signing secret for a webhook."],
      ["listWebhookDeliveries", "get", "/deliveries", "List recent deliveries of a webhook and their HTTP status."],
      ["redeliverWebhook", "post", "/redeliver", "Send a failed webhook delivery again.", [["delivery_id", "string", "The delivery."]]],
      ["disableWebhook", "post", "/disable", "Stop sending events to a webhook."],
    ],
  },
];

const lower = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
const singularWords = (resource: Resource) => lower(resource.singular.replace(/([a-z])([A-Z])/g, "$1 $2")).toLowerCase();
const properties = (fields: readonly Field[]) => Object.fromEntries(fields.map(([name, type, description]) => [name, { type, description }]));
const jsonBody = (fields: readonly Field[], required: readonly string[]) => ({
  required: true,
  content: { "application/json": { schema: { type: "object", properties: properties(fields), ...(required.length ? { required } : {}) } } },
});
const idParameter = (resource: Resource) => ({
  name: "id",
  in: "path",
  required: true,
  description: `The ${singularWords(resource)}'s id.`,
  schema: { type: "integer" },
});

/**
 * The business suite's OpenAPI document: 30 resources × (5 CRUD operations + 5 actions) = 300 operations.
 * @example businessSuiteOpenApi().paths["/employees/{id}/terminate"]; // { post: { operationId: "terminateEmployee", … } }
 */
export function businessSuiteOpenApi(): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  const at = (path: string) => (paths[path] ??= {});
  for (const resource of RESOURCES) {
    const noun = singularWords(resource);
    const item = `${resource.path}/{id}`;
    const required = resource.fields.slice(0, 2).map(([name]) => name);
    at(resource.path).get = {
      operationId: `list${resource.plural}`,
      summary: `List ${lower(resource.plural.replace(/([a-z])([A-Z])/g, "$1 $2")).toLowerCase()}.`,
      description: `Pages through the ${resource.about}, newest first; filter by text with q.`,
      parameters: [
        { name: "q", in: "query", description: "Words to search for.", schema: { type: "string" } },
        { name: "page", in: "query", description: "Page number, from 1.", schema: { type: "integer", minimum: 1 } },
        { name: "per_page", in: "query", description: "Items per page, at most 100.", schema: { type: "integer", maximum: 100 } },
      ],
    };
    at(resource.path).post = {
      operationId: `create${resource.singular}`,
      summary: `Create a ${noun}.`,
      description: `Adds one of the ${resource.about}.`,
      requestBody: jsonBody(resource.fields, required),
    };
    at(item).parameters = [idParameter(resource)];
    at(item).get = {
      operationId: `get${resource.singular}`,
      summary: `Get a ${noun} by id.`,
      description: `Everything stored about one of the ${resource.about}.`,
    };
    at(item).patch = {
      operationId: `update${resource.singular}`,
      summary: `Update a ${noun}.`,
      description: `Changes the given fields of one of the ${resource.about}.`,
      requestBody: jsonBody(resource.fields, []),
    };
    at(item).delete = {
      operationId: `delete${resource.singular}`,
      summary: `Delete a ${noun}.`,
      description: "Deletes the record for good; this cannot be undone.",
    };
    for (const [operationId, method, suffix, summary, fields] of resource.actions) {
      const path = `${item}${suffix}`;
      const extra = /\{(\w+)\}/.exec(suffix);
      at(path)[method] = {
        operationId,
        summary,
        parameters: [
          idParameter(resource),
          ...(extra ? [{ name: extra[1], in: "path", required: true, description: "The booking's id.", schema: { type: "string" } }] : []),
        ],
        ...(fields?.length ? { requestBody: jsonBody(fields, [fields[0]?.[0] as string]) } : {}),
      };
    }
  }
  return {
    openapi: "3.0.3",
    info: { title: "Acme Business Suite API", version: "1.0.0", description: "HR, finance, sales, logistics, projects, support and facilities." },
    servers: [{ url: "https://api.acme.example/v1" }],
    paths,
  };
}
